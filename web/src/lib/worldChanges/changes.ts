// World changes as the pages show them: one entry of a timeline (the session's
// kwargs.world_changes, e.g. {"at": 5000, "change": "mass", "body": "hand", "scale": 2.0}) in
// words, and a session's timeline beside the changes applied so far (GET
// /v0/sessions/{id}/world-changes: `applied` entries are the timeline entry plus `index`,
// `session_step`, `seq`, `time` and, in recordings, `episode` and `episode_step`).

/** Keys the platform adds to an applied entry (where and when), left out of its description. */
export const BOOKKEEPING_KEYS: ReadonlySet<string> = new Set([
  "at", "change", "index", "session_step", "seq", "time", "episode", "episode_step", "env_index",
]);

type Entry = Record<string, unknown>;

function isEntry(value: unknown): value is Entry {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** An entry in words: its kind and fields, e.g. `mass (body="hand", scale=2)`. */
export function describeChange(change: Entry): string {
  const kind = typeof change.change === "string" ? change.change : "change";
  const details = Object.entries(change)
    .filter(([key]) => !BOOKKEEPING_KEYS.has(key))
    .map(([key, value]) => `${key}=${JSON.stringify(value)}`);
  return details.length > 0 ? `${kind} (${details.join(", ")})` : kind;
}

function whole(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

export interface TimelineRow {
  /** The entry's place in the timeline. */
  index: number;
  at: number | null;
  label: string;
  /** The session steps it was applied at, oldest first (more than one after a snapshot's restore). */
  appliedAt: number[];
}

/** The timeline's entries in order, each with the session steps it was applied at so far. */
export function timelineRows(timeline: unknown, applied: unknown): TimelineRow[] {
  const entries = Array.isArray(timeline) ? timeline : [];
  const done = Array.isArray(applied) ? applied.filter(isEntry) : [];
  return entries.map((entry, index) => {
    const fields = isEntry(entry) ? entry : {};
    const appliedAt = done
      .filter((a) => a.index === index)
      .map((a) => whole(a.session_step) ?? whole(a.at))
      .filter((s): s is number => s !== null);
    return { index, at: whole(fields.at), label: describeChange(fields), appliedAt };
  });
}

/** A row's state in words: "applied at step 3", "applied at steps 3, 3", or "due at step 3". */
export function rowStatus(row: TimelineRow): string {
  if (row.appliedAt.length === 1) return `applied at session step ${row.appliedAt[0]}`;
  if (row.appliedAt.length > 1) return `applied at session steps ${row.appliedAt.join(", ")}`;
  return row.at === null ? "not applied" : `due at session step ${row.at}`;
}
