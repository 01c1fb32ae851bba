// An experiment's status in words and colour ("Queued (position 2)" while it waits for GPUs),
// whether it is still going (Cancel, the pages reading it again), its times: when it started and
// ended (UTC), how long it ran or has waited, and its GPUs and code (a repository or a folder).
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

/** The label with a queued one's place on its machine's queue: "Queued (position 1)" (1: the next). */
export function statusLabel(experiment: Pick<Experiment, "status" | "queue_position">): string {
  const { label } = statusView(experiment.status);
  return experiment.status === "queued" && experiment.queue_position > 0 ? `${label} (position ${experiment.queue_position})` : label;
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
  return secondsText((experiment.ended_at || now) - experiment.started_at);
}

/** How long a queued one has waited, from its creation to `now` (the same words). */
export function waitedText(experiment: Pick<Experiment, "created_at">, now: number): string {
  return secondsText(now - experiment.created_at);
}

function secondsText(elapsed: number): string {
  const seconds = Math.max(0, Math.round(elapsed));
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

/** Its GPUs: "none", "GPUs 0, 1" by nvidia-smi's index ("GPU 1 (shared)" when it shares them),
 * or how many it asked for before they are assigned ("2 GPUs asked for": queued). */
export function gpusText(experiment: Pick<Experiment, "gpus" | "gpu_indices"> & { share_gpus?: boolean }): string {
  if (!experiment.gpus) return "none";
  const shared = experiment.share_gpus ? " (shared)" : "";
  if (!experiment.gpu_indices.length) return `${experiment.gpus} ${experiment.gpus === 1 ? "GPU" : "GPUs"} asked for${shared}`;
  return `${experiment.gpu_indices.length === 1 ? "GPU" : "GPUs"} ${experiment.gpu_indices.join(", ")}${shared}`;
}

/** Where its code came from: a repository cloned on the machine (at its ref) or a folder of the
 * platform's host uploaded there. */
export function sourceView(experiment: Pick<Experiment, "repository" | "ref" | "folder">):
    { kind: "repository" | "folder"; where: string; ref: string } {
  if (experiment.folder) return { kind: "folder", where: experiment.folder, ref: "" };
  return { kind: "repository", where: experiment.repository, ref: experiment.ref };
}
