// The command in flight and its time so far, updated live, once it has taken over a second
// ("stepping… 3.2 s"); a step says that closing the session stops it.
// data-testid: command-progress.
import { useEffect, useState } from "react";
import type { PendingCommand } from "../../lib/play/playState";
import { progressText } from "./commandProgress";

/** How often the time shown is updated. */
const TICK_MS = 100;

export function CommandProgress({ pending }: { pending: PendingCommand | null }) {
  const [now, setNow] = useState(() => performance.now());
  useEffect(() => {
    if (pending === null) return;
    setNow(performance.now());
    const timer = setInterval(() => setNow(performance.now()), TICK_MS);
    return () => clearInterval(timer);
  }, [pending]);
  const text = progressText(pending, now);
  if (text === null) return null;
  return (
    <span className="command-progress" role="status" data-testid="command-progress">
      {text}
      {pending?.command === "step" ? <span className="muted"> (Close session stops it)</span> : null}
    </span>
  );
}
