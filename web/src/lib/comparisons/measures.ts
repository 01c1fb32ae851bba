// A comparison's agents as the Comparisons page's table shows them: one row per agent with its
// measures in words (docs/compare-measures.md defines them). Numbers may come as the strings
// "nan"/"inf" (what the recorder writes for non-finite values) or null (not measured).
import type { Schemas } from "../../api/client";

export type Comparison = Schemas["ComparisonPublic"];
export type ComparisonAgent = Schemas["ComparisonAgentPublic"];
export type ComparisonSummary = Schemas["ComparisonSummaryPublic"];
type Recovery = Schemas["RecoveryPublic"];
type Retention = Schemas["RetentionPublic"];
type Measure = number | string | null | undefined;

export interface RecoveryCell {
  at: number;
  /** "150 steps", "not recovered" or "too close to measure". */
  text: string;
  /** "worst -0.812" (the lowest window mean reached), or "" when not measured. */
  worst: string;
}

export interface RetentionCell {
  at: number;
  returnsTo: number | null;
  /** "0.912", or "too close to measure", or "–" when its level before was 0. */
  text: string;
}

export interface AgentRow {
  name: string;
  agent: string;
  success: string;
  recovery: RecoveryCell[];
  retention: RetentionCell[];
  compute: string;
  episodes: string;
  steps: string;
  /** The replay page of its recording, or null when it was not recorded. */
  replay: string | null;
  recordingId: string | null;
}

/** A measure for display: `digits` decimals, non-finite strings as they are, missing as "–". */
export function formatMeasure(value: Measure, digits = 3): string {
  if (value === null || value === undefined) return "–";
  if (typeof value === "string") return value;
  return value.toFixed(digits);
}

/** Success as a share: "40% of episodes" / "12.5% of steps"; "–" when nothing reported it. */
export function successText(success: Measure, of: string | null | undefined): string {
  if (success === null || success === undefined) return "–";
  if (typeof success === "string") return success;
  const percent = success * 100;
  const shown = Number.isInteger(percent) ? String(percent) : percent.toFixed(1);
  return of ? `${shown}% of ${of}` : `${shown}%`;
}

/** Compute per decision in milliseconds, e.g. "2.100 ms"; "–" when unknown. */
export function computeText(seconds: Measure): string {
  if (seconds === null || seconds === undefined) return "–";
  if (typeof seconds === "string") return seconds;
  return `${(seconds * 1000).toFixed(3)} ms`;
}

export function recoveryCell(recovery: Recovery): RecoveryCell {
  if (recovery.too_close) return { at: recovery.at, text: "too close to measure", worst: "" };
  const worst = recovery.worst === null || recovery.worst === undefined ? "" : `worst ${formatMeasure(recovery.worst)}`;
  if (recovery.recovered && typeof recovery.steps === "number") {
    return { at: recovery.at, text: `${recovery.steps} step${recovery.steps === 1 ? "" : "s"}`, worst };
  }
  return { at: recovery.at, text: "not recovered", worst };
}

export function retentionCell(retention: Retention): RetentionCell {
  const returnsTo = typeof retention.returns_to === "number" ? retention.returns_to : null;
  const text = retention.too_close ? "too close to measure" : formatMeasure(retention.retention);
  return { at: retention.at, returnsTo, text };
}

function count(value: number | null | undefined): string {
  return typeof value === "number" ? String(value) : "–";
}

/** The replay page of a recording: `/recordings/<id>`. */
export function replayPath(recordingId: string): string {
  return `/recordings/${encodeURIComponent(recordingId)}`;
}

export function agentRow(agent: ComparisonAgent): AgentRow {
  const measures = agent.measures ?? null;
  const recordingId = typeof agent.recording_id === "string" && agent.recording_id ? agent.recording_id : null;
  return {
    name: agent.name,
    agent: typeof agent.agent === "string" ? agent.agent : "",
    success: successText(measures?.success, measures?.success_of),
    recovery: (measures?.recovery ?? []).map(recoveryCell),
    retention: (measures?.retention ?? []).map(retentionCell),
    compute: computeText(measures?.compute_s),
    episodes: count(agent.episodes),
    steps: count(agent.steps),
    replay: recordingId === null ? null : replayPath(recordingId),
    recordingId,
  };
}

/** The comparison's timeline: its `world_changes`, else its kwargs' (what the session was made with). */
export function timelineOf(comparison: Pick<Comparison, "world_changes" | "kwargs">): unknown {
  return comparison.world_changes ?? comparison.kwargs?.world_changes ?? [];
}

/** When a comparison was stored, for display: "2026-12-02 18:00:00 UTC" (the ISO text when it does not parse). */
export function createdText(created: string | null | undefined): string {
  if (!created) return "–";
  const date = new Date(created);
  if (Number.isNaN(date.getTime())) return created;
  return `${date.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** The Comparisons page of a comparison. */
export function comparisonPath(id: string): string {
  return `/comparisons/${encodeURIComponent(id)}`;
}
