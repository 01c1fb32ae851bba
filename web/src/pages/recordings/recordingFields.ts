// What the Recordings table shows of a recording summary (meta.json fields pass through the
// API untyped beside the declared ones, so they are read here with their types checked).
import type { Schemas } from "../../api/client";

export type RecordingSummary = Schemas["RecordingSummaryPublic"];

function field(summary: RecordingSummary, name: string): unknown {
  return (summary as Record<string, unknown>)[name];
}

export function recordingId(summary: RecordingSummary): string {
  return String(summary.id ?? summary.session_id ?? "");
}

export function createdAt(summary: RecordingSummary): string {
  const value = field(summary, "created_at");
  if (typeof value !== "string") return "–";
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

export function stepCount(summary: RecordingSummary): number | null {
  const value = field(summary, "step_count");
  return typeof value === "number" ? value : null;
}

/** The episode a recording in progress is recording, as written so far (null when none). */
export function openEpisode(summary: RecordingSummary): { index: number; length: number } | null {
  const value = summary.open_episode;
  return value ? { index: value.index, length: value.length } : null;
}

/** Every step written so far: the finished episodes' and the open episode's. */
export function stepsSoFar(summary: RecordingSummary): number | null {
  const finished = stepCount(summary);
  return finished === null ? null : finished + (openEpisode(summary)?.length ?? 0);
}

export function totalReturn(summary: RecordingSummary): number | string | null {
  const value = field(summary, "total_return");
  return typeof value === "number" || typeof value === "string" ? value : null;
}

export function lifeName(summary: RecordingSummary): string | null {
  const value = field(summary, "life");
  return typeof value === "string" && value !== "" ? value : null;
}

/** Whether the recording can be deleted (a recording still being written cannot). */
export function deletable(summary: RecordingSummary): boolean {
  return summary.status !== "recording";
}
