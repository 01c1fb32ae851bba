// An experiment's status in words and colour, whether it is still going (Cancel, the pages
// reading it again), and its times: when it started and ended (UTC) and how long it ran.
import type { Experiment, ExperimentStatus } from "../../api/experiments";
import type { Tone } from "../machines/status";

export type ExperimentTone = Tone | "running";

const LABELS: Record<ExperimentStatus, { label: string; tone: ExperimentTone }> = {
  queued: { label: "Queued", tone: "muted" },
  starting: { label: "Starting", tone: "warn" },
  running: { label: "Running", tone: "running" },
  succeeded: { label: "Succeeded", tone: "good" },
  failed: { label: "Failed", tone: "bad" },
  cancelled: { label: "Cancelled", tone: "muted" },
  lost: { label: "Lost", tone: "bad" },
};

export function statusView(status: ExperimentStatus): { label: string; tone: ExperimentTone } {
  return LABELS[status] ?? { label: status, tone: "muted" };
}

/** Queued, starting or running: it may still change, and can be cancelled. */
export function isActive(status: ExperimentStatus): boolean {
  return status === "queued" || status === "starting" || status === "running";
}

/** How often a page reads experiments again while one is active (ms); null once all ended. */
export const ACTIVE_REFRESH_MS = 3000;
export function refreshMs(listed: readonly Pick<Experiment, "status">[] | null): number | null {
  return (listed ?? []).some((x) => isActive(x.status)) ? ACTIVE_REFRESH_MS : null;
}

/** Unix seconds as "2030-03-17 17:46:40" (UTC; the column says so); 0 is "–" (not yet). */
export function timeText(seconds: number): string {
  if (!seconds) return "–";
  return new Date(seconds * 1000).toISOString().slice(0, 19).replace("T", " ");
}

/** How long it ran: "12 s", "3 min 4 s", "2 h 5 min"; to `now` while it runs; "–" before it started. */
export function durationText(experiment: Pick<Experiment, "started_at" | "ended_at">, now: number): string {
  if (!experiment.started_at) return "–";
  const end = experiment.ended_at || now;
  const seconds = Math.max(0, Math.round(end - experiment.started_at));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** The exit code in words: the number, "none (killed)" once it ended without one, "–" before. */
export function exitCodeText(experiment: Pick<Experiment, "exit_code" | "ended_at">): string {
  if (experiment.exit_code !== null && experiment.exit_code !== undefined) return String(experiment.exit_code);
  return experiment.ended_at ? "none (it ended without one)" : "–";
}

/** Its GPUs: "none", or "GPU 0, 1" by nvidia-smi's index. */
export function gpusText(experiment: Pick<Experiment, "gpus" | "gpu_indices">): string {
  if (!experiment.gpus) return "none";
  if (!experiment.gpu_indices.length) return `${experiment.gpus}`;
  return `${experiment.gpu_indices.length === 1 ? "GPU" : "GPUs"} ${experiment.gpu_indices.join(", ")}`;
}
