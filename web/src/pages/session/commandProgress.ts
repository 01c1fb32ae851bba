// What the Session page says of the command in flight once it has taken a while: "stepping…
// 3.2 s". A step of a heavy environment (a robot's substeps at their maximum, a slow user
// environment) can take seconds, and the page says so instead of leaving Step grey and silent.
import type { Command, PendingCommand } from "../../lib/play/playState";

/** A command in flight for less than this says nothing (a usual step is answered sooner). */
export const SHOW_AFTER_MS = 1000;

const DOING: Record<Command, string> = { step: "stepping", reset: "resetting", restore: "restoring", close: "closing" };

/** "stepping… 3.2 s" for a command in flight since `pending.since` (ms), at `now`; null while it is recent. */
export function progressText(pending: PendingCommand | null, now: number): string | null {
  if (pending === null) return null;
  const elapsed = now - pending.since;
  if (elapsed < SHOW_AFTER_MS) return null;
  return `${DOING[pending.command]}… ${(elapsed / 1000).toFixed(1)} s`;
}
