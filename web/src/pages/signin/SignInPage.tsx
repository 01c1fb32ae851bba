// The sign-in page of a platform that needs a token (docs/auth.md), at /sign-in?next=<path>: every
// other path redirects here while signed out. With PLATFORM_AUTH=oidc, "Sign in with your
// identity provider" starts the code flow with PKCE (lib/auth/oidc.ts; the provider sends the
// browser back to /sign-in/callback). Pasting an API token (made on the Team page or at
// /v0/tokens, or PLATFORM_ADMIN_TOKEN) always works; the server's reason shows when it refuses
// one, or when a sign-in ended (an expired identity token, a revoked API token).
// data-testid: sign-in-page, sign-in-oidc, sign-in-oidc-error, sign-in-token, sign-in-submit,
// sign-in-error.
import { type FormEvent, useState } from "react";
import { useSearchParams } from "react-router-dom";
import type { Schemas } from "../../api/client";
import { errorMessage, safeNext, startSignIn } from "../../lib/auth/oidc";

interface Props {
  how: Schemas["SignInPublic"];
  reason: string | null;
  onSignIn: (token: string) => Promise<void>;
}

export function SignInPage({ how, reason, onSignIn }: Props) {
  const [params] = useSearchParams();
  const [token, setToken] = useState("");
  const [busy, setBusy] = useState(false);
  const [redirecting, setRedirecting] = useState(false);
  const [oidcError, setOidcError] = useState<string | null>(null);
  const oidc = how.auth === "oidc" && Boolean(how.oidc_issuer && how.oidc_client_id);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (!token.trim()) return;
    setBusy(true);
    await onSignIn(token);
    setBusy(false);
  }

  async function withProvider() {
    setOidcError(null);
    setRedirecting(true);
    try {
      const url = await startSignIn(how, window.location.origin, safeNext(params.get("next")));
      window.location.assign(url.toString());
    } catch (e) {
      setOidcError(errorMessage(e));
      setRedirecting(false);
    }
  }

  return (
    <section className="panel sign-in" data-testid="sign-in-page" aria-labelledby="sign-in-title">
      <h1 id="sign-in-title">Sign in</h1>
      {reason ? <p className="error" role="alert" data-testid="sign-in-error">{reason}</p> : null}
      {oidc ? (
        <>
          <p className="muted">This platform signs you in through your organisation's identity provider.</p>
          <p>
            <button type="button" className="primary" data-testid="sign-in-oidc" onClick={withProvider} disabled={redirecting}>
              {redirecting ? "Going to your identity provider…" : "Sign in with your identity provider"}
            </button>
          </p>
          {oidcError ? <p className="error" role="alert" data-testid="sign-in-oidc-error">{oidcError}</p> : null}
          <h2 className="sign-in-or">Or paste an API token</h2>
        </>
      ) : (
        <p className="muted">
          This platform needs a token (PLATFORM_AUTH={how.auth}). Paste an API token: an admin makes them on the
          Team page or at <code>/v0/tokens</code>.
        </p>
      )}
      <form onSubmit={submit} className="row">
        <label className="sr-only" htmlFor="sign-in-token">API token</label>
        <input id="sign-in-token" data-testid="sign-in-token" type="password" autoComplete="off" placeholder="sim_…"
          value={token} onChange={(e) => setToken(e.target.value)} />
        <button type="submit" className={oidc ? "" : "primary"} data-testid="sign-in-submit" disabled={busy || !token.trim()}>
          Sign in
        </button>
      </form>
    </section>
  );
}
