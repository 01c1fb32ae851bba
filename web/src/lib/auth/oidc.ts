// Signing in through the identity provider (PLATFORM_AUTH=oidc, docs/auth.md): the OpenID Connect
// authorization code flow with PKCE, as a public client (no client secret in a browser).
//
// 1. `startSignIn`: the issuer's discovery document (`<issuer>/.well-known/openid-configuration`)
//    names its endpoints; a random code verifier, state and nonce are kept in sessionStorage (this
//    tab only), and the browser goes to the authorization endpoint with response_type=code,
//    client_id, redirect_uri (`<origin>/sign-in/callback`), the scopes the provider supports of
//    "openid email profile groups", state, nonce and code_challenge (S256 of the verifier).
// 2. `finishSignIn` on /sign-in/callback: the answer's state must be the kept one (else it is
//    refused), the code is exchanged at the token endpoint (a form POST with code_verifier,
//    client_id and redirect_uri), and the answer's ID token (its issuer, audience, nonce and
//    times checked here; its signature by the gateway, against the issuer's keys) becomes the
//    bearer token the app keeps (lib/auth/token.ts).
//
// The protocol is oauth4webapi's (a small, dependency-free, certified client); only the storage,
// the choice of scopes and the messages are ours. An http:// issuer (a provider on this machine
// while developing) is allowed because the platform's operator configured it.
import * as oauth from "oauth4webapi";
import type { TokenStorage } from "./token";

/** The scopes asked for when the provider supports them ("openid" always). */
export const WANTED_SCOPES = ["openid", "email", "profile", "groups"] as const;
export const CALLBACK_PATH = "/sign-in/callback";
/** How long a started sign-in may take at the provider before its callback is refused. */
export const PENDING_MAX_AGE_MS = 15 * 60 * 1000;
const PENDING_KEY = "simulusion.oidc.pending";

/** What /v0/sign-in says about the identity provider. */
export interface OidcSettings {
  oidc_issuer?: string | null;
  oidc_client_id?: string | null;
}

/** A sign-in started in this tab, waiting for the provider to send the browser back. */
export interface PendingSignIn {
  issuer: string;
  clientId: string;
  redirectUri: string;
  state: string;
  nonce: string;
  verifier: string;
  /** Where to go once signed in (a path of this app). */
  next: string;
  startedAt: number;
}

export interface Flow {
  /** fetch for discovery and the token request (tests pass their own). */
  fetch?: typeof fetch;
  /** sessionStorage by default. */
  store?: TokenStorage | null;
  now?: () => number;
}

export class OidcError extends Error {}

function sessionStore(): TokenStorage | null {
  try {
    return typeof window === "undefined" ? null : window.sessionStorage;
  } catch {
    return null;
  }
}

/** The redirect URI of this app at `origin`. */
export function callbackUri(origin: string): string {
  return `${origin.replace(/\/+$/, "")}${CALLBACK_PATH}`;
}

/** The scope to ask for: "openid" and each of WANTED_SCOPES the provider lists in
 * `scopes_supported` (all of them when it lists none: the field is optional). */
export function chooseScope(scopesSupported: unknown): string {
  const listed = Array.isArray(scopesSupported) ? scopesSupported.filter((s) => typeof s === "string") : null;
  return WANTED_SCOPES.filter((scope) => scope === "openid" || listed === null || listed.includes(scope)).join(" ");
}

/** Where to go after signing in: a path of this app only (no other origin, not the sign-in pages). */
export function safeNext(next: string | null | undefined): string {
  if (!next || !next.startsWith("/") || next.startsWith("//") || next.startsWith("/\\")) return "/";
  if (next === "/sign-in" || next.startsWith("/sign-in/") || next.startsWith("/sign-in?")) return "/";
  return next;
}

export function savePending(pending: PendingSignIn, store: TokenStorage | null = sessionStore()): void {
  if (!store) throw new OidcError("this browser refuses session storage, which signing in through the identity provider needs");
  store.setItem(PENDING_KEY, JSON.stringify(pending));
}

/** The pending sign-in, removed as it is read (a callback is used once); null when there is
 * none, it is garbled, or it is older than PENDING_MAX_AGE_MS. */
export function takePending(store: TokenStorage | null = sessionStore(), now: number = Date.now()): PendingSignIn | null {
  const text = store?.getItem(PENDING_KEY) ?? null;
  store?.removeItem(PENDING_KEY);
  if (!text) return null;
  try {
    const pending = JSON.parse(text) as Partial<PendingSignIn>;
    const fields = ["issuer", "clientId", "redirectUri", "state", "nonce", "verifier", "next"] as const;
    if (fields.some((f) => typeof pending[f] !== "string") || typeof pending.startedAt !== "number") return null;
    if (now - pending.startedAt > PENDING_MAX_AGE_MS || pending.startedAt > now + 60_000) return null;
    return pending as PendingSignIn;
  } catch {
    return null;
  }
}

function insecure(issuer: URL): boolean {
  return issuer.protocol === "http:";
}

function requestOptions(issuer: URL, flow: Flow): { [oauth.allowInsecureRequests]?: boolean; [oauth.customFetch]?: typeof fetch } {
  return {
    ...(insecure(issuer) ? { [oauth.allowInsecureRequests]: true } : {}),
    ...(flow.fetch ? { [oauth.customFetch]: flow.fetch } : {}),
  };
}

function issuerUrl(issuer: string): URL {
  try {
    return new URL(issuer);
  } catch {
    throw new OidcError(`the platform's identity provider issuer is not a URL: ${issuer}`);
  }
}

/** The provider's metadata from its discovery document (its `issuer` must be the configured one). */
export async function discover(issuer: string, flow: Flow = {}): Promise<oauth.AuthorizationServer> {
  const url = issuerUrl(issuer);
  let response: Response;
  try {
    response = await oauth.discoveryRequest(url, { algorithm: "oidc", ...requestOptions(url, flow) });
  } catch (e) {
    throw new OidcError(`the identity provider ${issuer} could not be reached from this page (${errorMessage(e)}); `
      + "is it up, and does it allow this site's origin (CORS)?");
  }
  try {
    return await oauth.processDiscoveryResponse(url, response);
  } catch (e) {
    throw new OidcError(`the identity provider's discovery document was refused: ${errorMessage(e)}`);
  }
}

/** The authorization endpoint's URL for one sign-in. */
export function authorizationUrl(
  as: Pick<oauth.AuthorizationServer, "authorization_endpoint" | "scopes_supported">,
  request: { clientId: string; redirectUri: string; state: string; nonce: string; challenge: string },
): URL {
  if (!as.authorization_endpoint) throw new OidcError("the identity provider's discovery document names no authorization_endpoint");
  const url = new URL(as.authorization_endpoint);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", request.clientId);
  url.searchParams.set("redirect_uri", request.redirectUri);
  url.searchParams.set("scope", chooseScope(as.scopes_supported));
  url.searchParams.set("state", request.state);
  url.searchParams.set("nonce", request.nonce);
  url.searchParams.set("code_challenge", request.challenge);
  url.searchParams.set("code_challenge_method", "S256");
  return url;
}

function settingsOf(how: OidcSettings): { issuer: string; clientId: string } {
  if (!how.oidc_issuer || !how.oidc_client_id) {
    throw new OidcError("this platform names no identity provider (PLATFORM_OIDC_ISSUER and PLATFORM_OIDC_CLIENT_ID)");
  }
  return { issuer: how.oidc_issuer, clientId: how.oidc_client_id };
}

/** Starts a sign-in: keeps its secrets in this tab and answers the URL to send the browser to. */
export async function startSignIn(how: OidcSettings, origin: string, next: string, flow: Flow = {}): Promise<URL> {
  const { issuer, clientId } = settingsOf(how);
  const as = await discover(issuer, flow);
  const verifier = oauth.generateRandomCodeVerifier();
  const pending: PendingSignIn = {
    issuer, clientId, redirectUri: callbackUri(origin), verifier,
    state: oauth.generateRandomState(), nonce: oauth.generateRandomNonce(),
    next: safeNext(next), startedAt: (flow.now ?? Date.now)(),
  };
  const challenge = await oauth.calculatePKCECodeChallenge(verifier);
  const url = authorizationUrl(as, { ...pending, challenge });
  savePending(pending, flow.store === undefined ? sessionStore() : flow.store);
  return url;
}

/** What a finished sign-in gives: the bearer token to keep and where to go. */
export interface SignedIn {
  idToken: string;
  next: string;
}

/** Finishes the sign-in the provider sent the browser back from (`currentUrl`, the callback). */
export async function finishSignIn(currentUrl: string, flow: Flow = {}): Promise<SignedIn> {
  const store = flow.store === undefined ? sessionStore() : flow.store;
  const pending = takePending(store, (flow.now ?? Date.now)());
  const url = new URL(currentUrl);
  const providerError = url.searchParams.get("error");
  if (providerError && !pending) {
    throw new OidcError(`the identity provider refused: ${url.searchParams.get("error_description") ?? providerError}`);
  }
  if (!pending) {
    throw new OidcError("no sign-in was started in this tab, or it is older than 15 minutes: start again");
  }
  const as = await discover(pending.issuer, flow);
  const client: oauth.Client = { client_id: pending.clientId };
  let parameters: URLSearchParams;
  try {
    parameters = oauth.validateAuthResponse(as, client, url, pending.state);
  } catch (e) {
    throw new OidcError(`the identity provider's answer was refused: ${errorMessage(e)}`);
  }
  let tokens: oauth.TokenEndpointResponse;
  try {
    const response = await oauth.authorizationCodeGrantRequest(
      as, client, oauth.None(), parameters, pending.redirectUri, pending.verifier, requestOptions(issuerUrl(pending.issuer), flow));
    tokens = await oauth.processAuthorizationCodeResponse(as, client, response, {
      expectedNonce: pending.nonce, requireIdToken: true,
    });
  } catch (e) {
    throw new OidcError(`the identity provider did not give an ID token: ${errorMessage(e)}`);
  }
  if (!tokens.id_token) throw new OidcError("the identity provider's answer holds no ID token");
  return { idToken: tokens.id_token, next: pending.next };
}

/** A one-line reason of any error of the flow (oauth4webapi's carry the provider's description). */
export function errorMessage(error: unknown): string {
  if (error instanceof oauth.ResponseBodyError) return error.error_description ? `${error.error}: ${error.error_description}` : error.error;
  if (error instanceof oauth.AuthorizationResponseError) {
    return error.error_description ? `${error.error}: ${error.error_description}` : error.error;
  }
  if (error instanceof Error) return error.message;
  return String(error);
}
