// Whether the web app may show its pages: asks how this platform signs in (GET /v0/sign-in,
// open to everyone), then who the saved token is (GET /v0/me). Signed-out visitors of a
// platform that needs a token see only the sign-in page. A token refused later (any call's
// 401: an identity token that expired, an API token revoked) sends the app back there with the
// gateway's reason, and an identity token is looked at again when it expires.
import { createContext, useCallback, useContext, useEffect, useRef, useState } from "react";
import { api, apiError, type Schemas } from "../../api/client";
import { errorText } from "../errors";
import { forgetToken, jwtExpiry, onTokenRefused, savedToken, saveToken } from "./token";

export type Identity = Schemas["IdentityPublic"];
export type SignInHow = Schemas["SignInPublic"];

export type SignInState =
  | { phase: "checking" }
  | { phase: "open"; how: SignInHow; who: Identity | null } // the platform needs no token
  | { phase: "signed-in"; how: SignInHow; who: Identity }
  | { phase: "signed-out"; how: SignInHow; reason: string | null };

/** The gateway accepts an identity token this long past its `exp` (clock skew): look after it. */
export const EXPIRY_LEEWAY_MS = 31_000;
const MAX_TIMER_MS = 2_147_000_000;

async function whoIs(): Promise<{ who: Identity } | { refused: string }> {
  const { data, error, response } = await api.GET("/v0/me");
  if (response.ok && data) return { who: data };
  return { refused: apiError(response, error).detail };
}

/** Who is signed in and how the platform signs in, for the pages (the Team and Usage pages). */
export interface SignedIn {
  who: Identity | null;
  how: SignInHow | null;
}

export const IdentityContext = createContext<SignedIn>({ who: null, how: null });

export function useIdentity(): SignedIn {
  return useContext(IdentityContext);
}

/** The state at a click on Sign out: the pages go at once, before the saved token does, so that
 *  none of them (a session page still opening its stream, say) calls the gateway without it. */
export function signedOutNow(state: SignInState): SignInState {
  return state.phase === "signed-in" ? { phase: "signed-out", how: state.how, reason: null } : state;
}

export function useSignIn() {
  const [state, setState] = useState<SignInState>({ phase: "checking" });
  const checking = useRef(false);

  const check = useCallback(async () => {
    checking.current = true;
    try {
      const { data: how, error, response } = await api.GET("/v0/sign-in");
      if (!response.ok || !how) throw apiError(response, error);
      if (!how.token_required) {
        const answer = await whoIs().catch(() => null);
        return setState({ phase: "open", how, who: answer && "who" in answer ? answer.who : null });
      }
      if (!savedToken()) return setState({ phase: "signed-out", how, reason: null });
      const answer = await whoIs();
      if ("who" in answer) return setState({ phase: "signed-in", how, who: answer.who });
      forgetToken();
      setState({ phase: "signed-out", how, reason: answer.refused });
    } catch (e) {
      setState({ phase: "signed-out", how: { mode: "self-hosted", auth: "token", token_required: true }, reason: errorText(e) });
    } finally {
      checking.current = false;
    }
  }, []);

  useEffect(() => { void check(); }, [check]);

  // A call refused the saved token: ask /v0/me again, which says why (unless that is under way).
  useEffect(() => onTokenRefused(() => { if (!checking.current) void check(); }), [check]);

  // An identity token (a JWT) is looked at again once the gateway stops taking it.
  const signedInWith = state.phase === "signed-in" ? savedToken() : null;
  useEffect(() => {
    const expiry = jwtExpiry(signedInWith);
    if (expiry === null) return;
    const wait = Math.min(MAX_TIMER_MS, Math.max(1000, expiry * 1000 + EXPIRY_LEEWAY_MS - Date.now()));
    const timer = setTimeout(() => { void check(); }, wait);
    return () => clearTimeout(timer);
  }, [signedInWith, check]);

  const signIn = useCallback(async (token: string) => {
    saveToken(token);
    await check();
  }, [check]);

  const signOut = useCallback(() => {
    setState(signedOutNow);
    forgetToken();
    void check();
  }, [check]);

  return { state, signIn, signOut };
}
