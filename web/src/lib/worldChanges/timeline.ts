// A session's timeline beside the changes applied so far (GET /v0/sessions/{id}/world-changes:
// `timeline` is the session's kwargs.world_changes, and each `applied` record is a timeline entry
// plus `index`, `session_step`, `seq`, `time` and, in recordings, `episode` and `episode_step`),
// as rows for the Session page.
import { describeChange } from "./describe";
import { finiteNumber, isEntry } from "./entries";

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
      .map((a) => finiteNumber(a.session_step) ?? finiteNumber(a.at))
      .filter((s): s is number => s !== null);
    return { index, at: finiteNumber(fields.at), label: describeChange(fields), appliedAt };
  });
}

/** A row's state in words: "applied at step 3", "applied at steps 3, 3", or "due at step 3". */
export function rowStatus(row: TimelineRow): string {
  if (row.appliedAt.length === 1) return `applied at session step ${row.appliedAt[0]}`;
  if (row.appliedAt.length > 1) return `applied at session steps ${row.appliedAt.join(", ")}`;
  return row.at === null ? "not applied" : `due at session step ${row.at}`;
}
