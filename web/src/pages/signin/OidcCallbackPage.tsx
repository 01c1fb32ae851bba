// /sign-in/callback: where the identity provider sends the browser back with a code. The code is
// exchanged once (lib/auth/oidc.ts: the state checked, the PKCE verifier sent), the ID token is
// handed to the app's sign-in, and the app goes where the visitor was going. A refusal shows
// here with a way back to the sign-in page.
// data-testid: oidc-callback, oidc-callback-error.
import { useEffect, useRef, useState } from "react";
import { Link, useNavigate } from "react-router-dom";
import { errorMessage, finishSignIn, type SignedIn } from "../../lib/auth/oidc";

// One exchange per callback URL, even when React runs the effect twice (StrictMode in development).
const exchanges = new Map<string, Promise<SignedIn>>();

function exchangeOnce(url: string): Promise<SignedIn> {
  let exchange = exchanges.get(url);
  if (!exchange) {
    exchange = finishSignIn(url);
    exchanges.set(url, exchange);
  }
  return exchange;
}

interface Props {
  /** Keeps the token and checks it (GET /v0/me); resolves once the app knows. */
  onSignIn: (token: string, next: string) => Promise<void>;
}

export function OidcCallbackPage({ onSignIn }: Props) {
  const navigate = useNavigate();
  const [error, setError] = useState<string | null>(null);
  const signIn = useRef(onSignIn);
  signIn.current = onSignIn;

  useEffect(() => {
    let live = true;
    const url = window.location.href;
    exchangeOnce(url)
      .then(async ({ idToken, next }) => {
        if (!live) return;
        await signIn.current(idToken, next);
        // Still here: the gateway refused the ID token, and the sign-in page says why.
        if (live) navigate(`/sign-in?next=${encodeURIComponent(next)}`, { replace: true });
      })
      .catch((e: unknown) => { if (live) setError(errorMessage(e)); });
    return () => { live = false; };
  }, [navigate]);

  return (
    <section className="panel sign-in" data-testid="oidc-callback" aria-labelledby="oidc-callback-title">
      <h1 id="oidc-callback-title">Signing in…</h1>
      {error ? (
        <>
          <p className="error" role="alert" data-testid="oidc-callback-error">{error}</p>
          <p><Link to="/sign-in">Back to sign-in</Link></p>
        </>
      ) : <p className="muted">Checking the identity provider's answer.</p>}
    </section>
  );
}
