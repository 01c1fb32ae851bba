// Whether the web app may show its pages: asks how this platform signs in (GET /v0/sign-in,
// open to everyone), then who the saved token is (GET /v0/me). Signed-out visitors of a
// platform that needs a token see only the sign-in page.
import { useCallback, useEffect, useState } from "react";
import { api, apiError, type Schemas } from "../../api/client";
import { errorText } from "../errors";
import { forgetToken, savedToken, saveToken } from "./token";

export type SignInState =
  | { phase: "checking" }
  | { phase: "open" } // the platform needs no token
  | { phase: "signed-in"; who: Schemas["IdentityPublic"] }
  | { phase: "signed-out"; how: Schemas["SignInPublic"]; reason: string | null };

async function whoIs(): Promise<{ who: Schemas["IdentityPublic"] } | { refused: string }> {
  const { data, error, response } = await api.GET("/v0/me");
  if (response.ok && data) return { who: data };
  return { refused: apiError(response, error).detail };
}

export function useSignIn() {
  const [state, setState] = useState<SignInState>({ phase: "checking" });

  const check = useCallback(async () => {
    try {
      const { data: how, error, response } = await api.GET("/v0/sign-in");
      if (!response.ok || !how) throw apiError(response, error);
      if (!how.token_required) return setState({ phase: "open" });
      if (!savedToken()) return setState({ phase: "signed-out", how, reason: null });
      const answer = await whoIs();
      if ("who" in answer) return setState({ phase: "signed-in", who: answer.who });
      forgetToken();
      setState({ phase: "signed-out", how, reason: answer.refused });
    } catch (e) {
      setState({ phase: "signed-out", how: { auth: "token", token_required: true }, reason: errorText(e) });
    }
  }, []);

  useEffect(() => { void check(); }, [check]);

  const signIn = useCallback(async (token: string) => {
    saveToken(token);
    await check();
  }, [check]);

  const signOut = useCallback(() => {
    forgetToken();
    void check();
  }, [check]);

  return { state, signIn, signOut };
}
