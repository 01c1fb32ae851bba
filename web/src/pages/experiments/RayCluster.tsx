// An experiment's Ray cluster (docs/training.md, "Distributed training"): the head on the
// experiment's machine and each worker with its machine, state (its reason when it failed or
// stopped) and run folder. data-testid: experiment-ray, experiment-ray-node (data-role,
// data-machine), experiment-ray-state.
import { Link } from "react-router-dom";
import type { Experiment } from "../../api/experiments";
import { clusterNodes } from "../../lib/experiments/rayCluster";

export function RayCluster({ experiment }: { experiment: Experiment }) {
  const nodes = clusterNodes(experiment);
  if (!nodes.length || !experiment.ray) return null;
  return (
    <section className="experiment-ray" data-testid="experiment-ray">
      <h3>Ray cluster</h3>
      <p className="muted">
        Head at <code>{experiment.ray.head_address}:{experiment.ray.port}</code>, virtual environment <code>{experiment.ray.venv}</code>
        {experiment.ray.start_args ? <>, <code>ray start {experiment.ray.start_args}</code></> : null}. The platform assigns no GPU
        of a worker machine: Ray sees all it has.
      </p>
      <table className="experiment-ray-nodes">
        <thead><tr><th>Role</th><th>Machine</th><th>State</th><th>On the machine</th></tr></thead>
        <tbody>
          {nodes.map((node) => (
            <tr key={`${node.role}-${node.machineId}`} data-testid="experiment-ray-node" data-role={node.role} data-machine={node.machineName}>
              <td>{node.role}</td>
              <td><Link to="/machines">{node.machineName}</Link> <span className="muted">({node.machineId})</span></td>
              <td>
                <span className={`experiment-status tone-${node.tone}`} data-testid="experiment-ray-state">{node.label}</span>
                {node.reason ? <span className="muted"> {node.reason}</span> : null}
              </td>
              <td>{node.runDir ? <code>{node.runDir}</code> : <span className="muted">not yet</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
