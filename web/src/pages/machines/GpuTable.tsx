// A machine's GPUs: index, name, memory, driver, and the processes already on each.
// data-testid: machine-gpus, machine-gpu (one row per GPU), machine-gpu-error, machine-no-gpu.
import type { MachineFacts } from "../../api/machines";
import { gpuRows } from "../../lib/machines/gpus";
import { gpuMemory } from "../../lib/machines/units";

export function GpuTable({ facts }: { facts: MachineFacts }) {
  const rows = gpuRows(facts);
  if (facts.gpu_error) {
    return <p className="error" data-testid="machine-gpu-error">nvidia-smi failed: {facts.gpu_error}</p>;
  }
  if (!rows.length) return <p className="muted" data-testid="machine-no-gpu">No GPU: a CPU machine (no nvidia-smi).</p>;
  return (
    <table className="machine-gpus" data-testid="machine-gpus">
      <caption className="sr-only">GPUs</caption>
      <thead>
        <tr><th scope="col">GPU</th><th scope="col">Name</th><th scope="col">Memory</th><th scope="col">Driver</th><th scope="col">In use</th></tr>
      </thead>
      <tbody>
        {rows.map(({ gpu, memory, processes, use }) => (
          <tr key={gpu.uuid || gpu.index} data-testid="machine-gpu">
            <td className="num">{gpu.index}</td>
            <td>{gpu.name}</td>
            <td className="num">{memory}</td>
            <td>{gpu.driver_version || "–"}</td>
            <td>
              {use}
              {processes.length ? (
                <ul className="gpu-processes">
                  {processes.map((p) => <li key={p.pid}>pid {p.pid}{p.used_memory_mib != null ? `: ${gpuMemory(p.used_memory_mib)}` : ""}</li>)}
                </ul>
              ) : null}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
