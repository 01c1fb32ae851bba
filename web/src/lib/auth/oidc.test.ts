import { calculatePKCECodeChallenge, generateRandomCodeVerifier } from "oauth4webapi";
import { describe, expect, it } from "vitest";
import {
  authorizationUrl, callbackUri, chooseScope, finishSignIn, PENDING_MAX_AGE_MS, type PendingSignIn, safeNext,
  savePending, startSignIn, takePending,
} from "./oidc";
import type { TokenStorage } from "./token";

const ISSUER = "http://127.0.0.1:9400";
const ORIGIN = "http://127.0.0.1:8000";
const NOW = 1_800_000_000_000;

function memory(): TokenStorage & { items: Map<string, string> } {
  const items = new Map<string, string>();
  return {
    items,
    getItem: (k) => items.get(k) ?? null,
    setItem: (k, v) => void items.set(k, v),
    removeItem: (k) => void items.delete(k),
  };
}

function base64url(value: object | string): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return Buffer.from(text).toString("base64").replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** An ID token as the provider's token endpoint answers it (its signature is the gateway's to check). */
function idToken(claims: Record<string, unknown>): string {
  return `${base64url({ alg: "RS256", typ: "JWT", kid: "k1" })}.${base64url(claims)}.${base64url("signature")}`;
}

const DISCOVERY = {
  issuer: ISSUER,
  authorization_endpoint: `${ISSUER}/oauth2/authorize`,
  token_endpoint: `${ISSUER}/oauth2/token`,
  jwks_uri: `${ISSUER}/jwks`,
  response_types_supported: ["code"],
  scopes_supported: ["openid", "profile", "email", "address", "phone"],
  id_token_signing_alg_values_supported: ["RS256"],
};

interface Seen { url: string; method: string; body: string; headers: Headers }

/** A provider answering discovery and the token endpoint; the token answer is made from the
 * token request's body (so a test can check what was sent and answer with the nonce it wants). */
function provider(answer: (body: URLSearchParams) => Record<string, unknown> | Response) {
  const seen: Seen[] = [];
  const fetch = (async (input: RequestInfo | URL, init: RequestInit = {}) => {
    const url = String(input instanceof Request ? input.url : input);
    const body = init.body instanceof URLSearchParams ? init.body.toString() : String(init.body ?? "");
    seen.push({ url, method: init.method ?? "GET", body, headers: new Headers(init.headers) });
    if (url === `${ISSUER}/.well-known/openid-configuration`) return Response.json(DISCOVERY);
    if (url === DISCOVERY.token_endpoint) {
      const made = answer(new URLSearchParams(body));
      return made instanceof Response ? made : Response.json(made);
    }
    return new Response("not found", { status: 404 });
  }) as typeof globalThis.fetch;
  return { fetch, seen };
}

describe("PKCE", () => {
  it("derives the S256 challenge of RFC 7636's example verifier", async () => {
    expect(await calculatePKCECodeChallenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"))
      .toBe("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
  });

  it("makes random verifiers of 43 base64url characters (RFC 7636: 43 to 128)", () => {
    const verifiers = new Set(Array.from({ length: 20 }, () => generateRandomCodeVerifier()));
    expect(verifiers.size).toBe(20);
    for (const v of verifiers) expect(v).toMatch(/^[A-Za-z0-9_-]{43,128}$/);
  });
});

describe("the authorization request", () => {
  it("asks for the wanted scopes the provider lists, all of them when it lists none", () => {
    expect(chooseScope(DISCOVERY.scopes_supported)).toBe("openid email profile");
    expect(chooseScope(["openid", "groups", "email", "profile"])).toBe("openid email profile groups");
    expect(chooseScope(undefined)).toBe("openid email profile groups");
    expect(chooseScope(["email"])).toBe("openid email");
  });

  it("carries the code flow's parameters and the S256 challenge", () => {
    const url = authorizationUrl(DISCOVERY, {
      clientId: "simulusion-web", redirectUri: callbackUri(`${ORIGIN}/`), state: "st", nonce: "no", challenge: "ch",
    });
    expect(url.origin + url.pathname).toBe(`${ISSUER}/oauth2/authorize`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: "code", client_id: "simulusion-web", redirect_uri: `${ORIGIN}/sign-in/callback`,
      scope: "openid email profile", state: "st", nonce: "no", code_challenge: "ch", code_challenge_method: "S256",
    });
  });

  it("goes back only to a path of this app", () => {
    expect(safeNext("/recordings?env_id=cartpole")).toBe("/recordings?env_id=cartpole");
    for (const bad of [null, "", "https://evil.example/", "//evil.example/x", "/\\evil", "/sign-in", "/sign-in/callback?code=1"]) {
      expect(safeNext(bad)).toBe("/");
    }
  });
});

describe("the pending sign-in", () => {
  const pending: PendingSignIn = {
    issuer: ISSUER, clientId: "c", redirectUri: `${ORIGIN}/sign-in/callback`, state: "s", nonce: "n", verifier: "v",
    next: "/usage", startedAt: NOW,
  };

  it("is read once", () => {
    const store = memory();
    savePending(pending, store);
    expect(takePending(store, NOW + 1000)).toEqual(pending);
    expect(takePending(store, NOW + 1000)).toBeNull();
  });

  it("is refused when stale or garbled", () => {
    const store = memory();
    savePending(pending, store);
    expect(takePending(store, NOW + PENDING_MAX_AGE_MS + 1)).toBeNull();
    store.setItem("simulusion.oidc.pending", "{not json");
    expect(takePending(store, NOW)).toBeNull();
    store.setItem("simulusion.oidc.pending", JSON.stringify({ ...pending, verifier: 3 }));
    expect(takePending(store, NOW)).toBeNull();
  });
});

describe("the whole flow against a provider", () => {
  async function started(store: TokenStorage, fetch: typeof globalThis.fetch) {
    const url = await startSignIn({ oidc_issuer: ISSUER, oidc_client_id: "simulusion-web" }, ORIGIN, "/usage",
      { fetch, store, now: () => NOW });
    const kept = JSON.parse(store.getItem("simulusion.oidc.pending")!) as PendingSignIn;
    return { url, kept };
  }

  it("sends the verifier whose challenge went to the provider, and keeps the ID token", async () => {
    const store = memory();
    let nonce = "";
    const { fetch, seen } = provider((body) => ({
      access_token: "at", token_type: "Bearer", expires_in: 3600,
      id_token: idToken({ iss: ISSUER, aud: "simulusion-web", sub: "alice", nonce, iat: Math.floor(Date.now() / 1000),
        exp: Math.floor(Date.now() / 1000) + 3600, code: body.get("code") }),
    }));
    const { url, kept } = await started(store, fetch);
    nonce = kept.nonce;
    expect(url.searchParams.get("state")).toBe(kept.state);
    expect(url.searchParams.get("nonce")).toBe(kept.nonce);
    expect(url.searchParams.get("code_challenge")).toBe(await calculatePKCECodeChallenge(kept.verifier));

    const done = await finishSignIn(`${ORIGIN}/sign-in/callback?code=the-code&state=${kept.state}`, { fetch, store, now: () => NOW });
    expect(done.next).toBe("/usage");
    expect(done.idToken.split(".")).toHaveLength(3);
    const request = seen.find((s) => s.url === DISCOVERY.token_endpoint)!;
    expect(request.method).toBe("POST");
    const sent = Object.fromEntries(new URLSearchParams(request.body));
    expect(sent).toEqual({
      grant_type: "authorization_code", code: "the-code", redirect_uri: `${ORIGIN}/sign-in/callback`,
      code_verifier: kept.verifier, client_id: "simulusion-web",
    });
    expect(request.headers.has("Authorization")).toBe(false); // a public client: no secret
    expect(store.getItem("simulusion.oidc.pending")).toBeNull();
  });

  it("refuses an answer whose state is not the kept one, without asking for a token", async () => {
    const store = memory();
    const { fetch, seen } = provider(() => ({}));
    await started(store, fetch);
    await expect(finishSignIn(`${ORIGIN}/sign-in/callback?code=c&state=forged`, { fetch, store, now: () => NOW }))
      .rejects.toThrow(/answer was refused: unexpected "state"/);
    expect(seen.some((s) => s.url === DISCOVERY.token_endpoint)).toBe(false);
  });

  it("refuses an ID token for another nonce or audience", async () => {
    for (const claims of [{ nonce: "other", aud: "simulusion-web" }, { nonce: null, aud: "another-client" }]) {
      const store = memory();
      let nonce = "";
      const { fetch } = provider(() => ({
        access_token: "at", token_type: "Bearer",
        id_token: idToken({ iss: ISSUER, sub: "alice", iat: Math.floor(Date.now() / 1000),
          exp: Math.floor(Date.now() / 1000) + 60, aud: claims.aud, nonce: claims.nonce ?? nonce }),
      }));
      const { kept } = await started(store, fetch);
      nonce = kept.nonce;
      await expect(finishSignIn(`${ORIGIN}/sign-in/callback?code=c&state=${kept.state}`, { fetch, store, now: () => NOW }))
        .rejects.toThrow(/did not give an ID token/);
    }
  });

  it("says what the provider answered to a refused exchange or a denied sign-in", async () => {
    const store = memory();
    const { fetch } = provider(() => Response.json({ error: "invalid_grant", error_description: "Code challenge failed." }, { status: 400 }));
    const { kept } = await started(store, fetch);
    await expect(finishSignIn(`${ORIGIN}/sign-in/callback?code=c&state=${kept.state}`, { fetch, store, now: () => NOW }))
      .rejects.toThrow("the identity provider did not give an ID token: invalid_grant: Code challenge failed.");

    const { kept: again } = await started(store, fetch);
    await expect(finishSignIn(`${ORIGIN}/sign-in/callback?error=access_denied&state=${again.state}`, { fetch, store, now: () => NOW }))
      .rejects.toThrow(/answer was refused: access_denied/);
  });

  it("needs a sign-in started in this tab", async () => {
    const { fetch } = provider(() => ({}));
    await expect(finishSignIn(`${ORIGIN}/sign-in/callback?code=c&state=s`, { fetch, store: memory() }))
      .rejects.toThrow(/no sign-in was started in this tab/);
  });
});
