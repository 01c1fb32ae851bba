// One world change in words, as every page lists it: its kind and its own fields, without the
// bookkeeping the platform adds to an applied record.
import type { WorldChangeEntry } from "./entries";

/** Keys the platform adds to an applied entry (where and when), left out of its description. */
export const BOOKKEEPING_KEYS: ReadonlySet<string> = new Set([
  "at", "change", "index", "session_step", "seq", "time", "episode", "episode_step", "env_index",
]);

/** An entry in words: its kind and fields, e.g. `mass (body="hand", scale=2)`. */
export function describeChange(change: WorldChangeEntry): string {
  const kind = typeof change.change === "string" ? change.change : "change";
  const details = Object.entries(change)
    .filter(([key]) => !BOOKKEEPING_KEYS.has(key))
    .map(([key, value]) => `${key}=${JSON.stringify(value)}`);
  return details.length > 0 ? `${kind} (${details.join(", ")})` : kind;
}
