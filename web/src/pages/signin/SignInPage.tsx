// The sign-in page of a platform that needs a token (docs/auth.md): paste an API token (made at
// /v0/tokens, or PLATFORM_ADMIN_TOKEN); the server's reason shows when it refuses one.
// data-testid: sign-in-page, sign-in-token, sign-in-submit, sign-in-error.
import { type FormEvent, useState } from "react";
import type { Schemas } from "../../api/client";

interface Props {
  how: Schemas["SignInPublic"];
  reason: string | null;
  onSignIn: (token: string) => Promise<void>;
}

export function SignInPage({ how, reason, onSignIn }: Props) {
  const [token, setToken] = useState("");
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (!token.trim()) return;
    setBusy(true);
    await onSignIn(token);
    setBusy(false);
  }

  return (
    <section className="panel sign-in" data-testid="sign-in-page" aria-labelledby="sign-in-title">
      <h1 id="sign-in-title">Sign in</h1>
      <p className="muted">
        This platform needs a token (PLATFORM_AUTH={how.auth}). Paste an API token: an admin makes them at
        {" "}<code>/v0/tokens</code>{how.auth === "oidc" ? ", or use your identity provider's ID token" : ""}.
      </p>
      <form onSubmit={submit} className="row">
        <label className="sr-only" htmlFor="sign-in-token">API token</label>
        <input id="sign-in-token" data-testid="sign-in-token" type="password" autoComplete="off" placeholder="sim_…"
          value={token} onChange={(e) => setToken(e.target.value)} />
        <button type="submit" className="primary" data-testid="sign-in-submit" disabled={busy || !token.trim()}>Sign in</button>
      </form>
      {reason ? <p className="error" role="alert" data-testid="sign-in-error">{reason}</p> : null}
    </section>
  );
}
