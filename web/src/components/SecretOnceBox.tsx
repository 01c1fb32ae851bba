// A secret shown the one time it exists in the browser (a new API token, a machine behind NAT's
// command holding its tunnel key): with a Copy button and a warning that it will not be shown
// again (the platform keeps none of it). "Done" forgets it; no list ever holds a secret.
// data-testid, with the caller's prefix: `${prefix}-secret-box`, `${prefix}-secret`,
// `${prefix}-copy`, `${prefix}-copied`, `${prefix}-secret-warning`, `${prefix}-secret-done`.
import { type ReactNode, useRef, useState } from "react";
import "./secretOnce.css";

interface Props {
  secret: string;
  /** the data-testid prefix: "token" gives token-secret-box, token-secret, token-copy, ... */
  prefix: string;
  /** what the field holds, for screen readers: "The new token's secret" */
  label: string;
  /** what was made and what to copy, before the warning: "Token <b>ci</b> was made. Copy its secret now:" */
  children: ReactNode;
  /** a long command wraps in a text area instead of scrolling in one line */
  multiline?: boolean;
  onDone: () => void;
}

export function SecretOnceBox({ secret, prefix, label, children, multiline = false, onDone }: Props) {
  const [copy, setCopy] = useState<"idle" | "copied" | "refused">("idle");
  const field = useRef<HTMLInputElement & HTMLTextAreaElement>(null);
  const id = `${prefix}-secret`;

  async function copySecret() {
    try {
      await navigator.clipboard.writeText(secret);
      setCopy("copied");
    } catch {
      field.current?.select();
      setCopy("refused");
    }
  }

  const common = {
    id, ref: field, "data-testid": id, readOnly: true, value: secret, spellCheck: false,
    onFocus: (e: { currentTarget: { select: () => void } }) => e.currentTarget.select(),
  };
  return (
    <div className="secret-once" role="status" data-testid={`${prefix}-secret-box`}>
      <p>
        {children}{" "}
        <strong data-testid={`${prefix}-secret-warning`}>it will not be shown again.</strong>
      </p>
      <div className={multiline ? "secret-row secret-row-multiline" : "secret-row"}>
        <label className="sr-only" htmlFor={id}>{label}</label>
        {multiline ? <textarea {...common} rows={5} /> : <input {...common} />}
        <button type="button" className="primary" data-testid={`${prefix}-copy`} onClick={copySecret}>Copy</button>
        <button type="button" data-testid={`${prefix}-secret-done`} onClick={onDone}>Done</button>
      </div>
      {copy === "copied" ? <p className="good" data-testid={`${prefix}-copied`}>Copied to the clipboard.</p> : null}
      {copy === "refused" ? (
        <p className="muted" data-testid={`${prefix}-copied`}>The browser refused the clipboard: the secret is selected, copy it with Ctrl+C.</p>
      ) : null}
    </div>
  );
}
