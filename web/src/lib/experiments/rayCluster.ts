// An experiment's Ray cluster as the experiment page shows it: the head (the experiment's
// machine, in the experiment's status) then each worker with its state's label and tone.
import type { Experiment } from "../../api/experiments";
import { type ExperimentTone, statusView } from "./status";

export type RayWorkerState = NonNullable<Experiment["ray"]>["workers"][number]["state"];

const WORKER_STATES: Record<RayWorkerState, { label: string; tone: ExperimentTone }> = {
  starting: { label: "Starting", tone: "warn" },
  running: { label: "Running", tone: "running" },
  stopped: { label: "Stopped", tone: "muted" },
  failed: { label: "Failed", tone: "bad" },
};

export interface ClusterNode {
  role: "head" | "worker";
  machineId: string;
  machineName: string;
  label: string;
  tone: ExperimentTone;
  reason: string;
  runDir: string;
}

/** The head and the workers; empty for an experiment without Ray. */
export function clusterNodes(experiment: Experiment): ClusterNode[] {
  const ray = experiment.ray;
  if (!ray) return [];
  const head = statusView(experiment.status);
  return [
    { role: "head", machineId: experiment.machine_id, machineName: experiment.machine_name, label: head.label,
      tone: head.tone, reason: "", runDir: experiment.run_dir },
    ...ray.workers.map((w): ClusterNode => ({
      role: "worker", machineId: w.machine_id, machineName: w.machine_name, label: WORKER_STATES[w.state].label,
      tone: WORKER_STATES[w.state].tone, reason: w.state_reason, runDir: w.run_dir,
    })),
  ];
}
