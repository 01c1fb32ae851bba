// A new API token's secret, shown the one time it exists in the browser: right after it was
// made, with a Copy button and a warning that it will not be shown again (the platform keeps
// only its SHA-256). "Done" forgets it; the token list never holds a secret.
// data-testid: token-secret-box, token-secret, token-copy, token-copied, token-secret-warning,
// token-secret-done.
import { useRef, useState } from "react";
import type { SecretOnce } from "../../lib/team/team";

interface Props {
  shown: SecretOnce;
  onDone: () => void;
}

export function SecretOnceBox({ shown, onDone }: Props) {
  const [copy, setCopy] = useState<"idle" | "copied" | "refused">("idle");
  const field = useRef<HTMLInputElement>(null);

  async function copySecret() {
    try {
      await navigator.clipboard.writeText(shown.secret);
      setCopy("copied");
    } catch {
      field.current?.select();
      setCopy("refused");
    }
  }

  return (
    <div className="secret-once" role="status" data-testid="token-secret-box">
      <p>
        Token <strong>{shown.name}</strong> (<code>{shown.id}</code>) was made. Copy its secret now:{" "}
        <strong data-testid="token-secret-warning">it will not be shown again.</strong>
      </p>
      <div className="secret-row">
        <label className="sr-only" htmlFor="token-secret">The new token's secret</label>
        <input id="token-secret" ref={field} data-testid="token-secret" readOnly value={shown.secret}
          spellCheck={false} onFocus={(e) => e.currentTarget.select()} />
        <button type="button" className="primary" data-testid="token-copy" onClick={copySecret}>Copy</button>
        <button type="button" data-testid="token-secret-done" onClick={onDone}>Done</button>
      </div>
      {copy === "copied" ? <p className="good" data-testid="token-copied">Copied to the clipboard.</p> : null}
      {copy === "refused" ? (
        <p className="muted" data-testid="token-copied">The browser refused the clipboard: the secret is selected, copy it with Ctrl+C.</p>
      ) : null}
    </div>
  );
}
