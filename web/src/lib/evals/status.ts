// An eval's status in words and colour, whether it is still going (Cancel, the pages reading it
// again), its progress in words, and its main score ("0.50 ± 0.29": the first metric of its first
// score, with that score's standard error).
import type { Eval, EvalStatus } from "../../api/evals";
import type { ExperimentTone } from "../experiments/status";

const LABELS: Record<EvalStatus, { label: string; tone: ExperimentTone }> = {
  queued: { label: "Queued", tone: "muted" },
  running: { label: "Running", tone: "running" },
  importing: { label: "Importing", tone: "warn" },
  succeeded: { label: "Succeeded", tone: "good" },
  failed: { label: "Failed", tone: "bad" },
  cancelled: { label: "Cancelled", tone: "muted" },
  lost: { label: "Lost", tone: "bad" },
};

export function evalStatusView(status: EvalStatus): { label: string; tone: ExperimentTone } {
  return LABELS[status] ?? { label: status, tone: "muted" };
}

/** Queued, running or importing its logs: it may still change (and can be cancelled). */
export function evalActive(status: EvalStatus): boolean {
  return status === "queued" || status === "running" || status === "importing";
}

/** "3 / 4 samples", "preparing its environment", "waiting for GPUs" (phase before the task started). */
export function progressText(progress: Eval["progress"]): string {
  if (progress.total > 0) return `${progress.done} / ${progress.total} samples`;
  const phases: Record<string, string> = { waiting: "waiting for GPUs", preparing: "preparing its environment", running: "starting the task" };
  return phases[progress.phase] ?? (progress.phase || "–");
}

/** A metric's value, 3 significant digits at most ("0.5", "12.3", "1.23e+4"). */
export function numberText(value: number | null | undefined): string {
  if (value === null || value === undefined || Number.isNaN(value)) return "–";
  if (value === 0) return "0";
  const abs = Math.abs(value);
  if (abs >= 1e4 || abs < 1e-3) return value.toExponential(2);
  return String(Number(value.toPrecision(3)));
}

/** "0.5 ± 0.289" (± the standard error when the score has one). */
export function valueText(value: number, stderr: number | null | undefined): string {
  return stderr === null || stderr === undefined ? numberText(value) : `${numberText(value)} ± ${numberText(stderr)}`;
}

/** The first metric of the first score, named ("accuracy (utility)"), or null before there are scores. */
export function mainScore(x: Pick<Eval, "scores">): { label: string; text: string } | null {
  const score = x.scores[0];
  const metric = score?.metrics[0];
  if (!score || !metric) return null;
  return { label: `${metric.name} (${score.name})`, text: valueText(metric.value, metric.stderr) };
}
