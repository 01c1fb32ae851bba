// A machine's GPUs with the processes already on them (nvidia-smi's compute apps, matched by the
// GPU's uuid), for the list.
import type { GpuProcess, MachineFacts, MachineGpu } from "../../api/machines";
import { gpuMemory } from "./units";

export interface GpuRow {
  gpu: MachineGpu;
  memory: string;
  processes: GpuProcess[];
  /** "free", or "1 process (1 GiB)", "2 processes (3.5 GiB)" */
  use: string;
}

function processUse(processes: GpuProcess[]): string {
  if (!processes.length) return "free";
  const known = processes.map((p) => p.used_memory_mib).filter((m): m is number => typeof m === "number");
  const memory = known.length ? ` (${gpuMemory(known.reduce((a, b) => a + b, 0))})` : "";
  return `${processes.length} process${processes.length === 1 ? "" : "es"}${memory}`;
}

/** One row per GPU, by index. */
export function gpuRows(facts: Pick<MachineFacts, "gpus" | "gpu_processes">): GpuRow[] {
  const processes = facts.gpu_processes ?? [];
  return [...(facts.gpus ?? [])]
    .sort((a, b) => a.index - b.index)
    .map((gpu) => {
      const on = processes.filter((p) => p.gpu_uuid === gpu.uuid);
      return { gpu, memory: gpuMemory(gpu.memory_total_mib), processes: on, use: processUse(on) };
    });
}

/** "2 × NVIDIA H100 80GB HBM3", "1 × A, 1 × B", or "no GPU (a CPU machine)". */
export function gpuSummary(facts: Pick<MachineFacts, "gpus">): string {
  const counts = new Map<string, number>();
  for (const gpu of facts.gpus ?? []) counts.set(gpu.name, (counts.get(gpu.name) ?? 0) + 1);
  if (!counts.size) return "no GPU (a CPU machine)";
  return [...counts].map(([name, n]) => `${n} × ${name}`).join(", ");
}
