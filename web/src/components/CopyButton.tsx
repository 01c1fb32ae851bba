// A Copy button for a text the user takes elsewhere (a key, a command). Where the browser refuses
// the clipboard it says so, and the caller's field can be selected for Ctrl+C instead.
// data-testid: `${testId}` (the button) and `${testId}-done` (what happened).
import { useState } from "react";

interface Props {
  text: string;
  testId: string;
  /** what is copied, for screen readers: "Copy the authorized_keys line" */
  label: string;
  /** called when the clipboard is refused (e.g. select the field holding the text) */
  onRefused?: () => void;
}

export function CopyButton({ text, testId, label, onRefused }: Props) {
  const [state, setState] = useState<"idle" | "copied" | "refused">("idle");

  async function copy() {
    try {
      await navigator.clipboard.writeText(text);
      setState("copied");
    } catch {
      onRefused?.();
      setState("refused");
    }
  }

  return (
    <>
      <button type="button" data-testid={testId} aria-label={label} onClick={copy}>Copy</button>
      <span role="status" className={state === "copied" ? "good" : "muted"} data-testid={`${testId}-done`}>
        {state === "copied" ? "Copied." : state === "refused" ? "The browser refused the clipboard: the text is selected, copy it with Ctrl+C." : ""}
      </span>
    </>
  );
}
