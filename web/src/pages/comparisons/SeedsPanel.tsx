// A comparison over several seeds (`compare --seeds N`): for each agent, each measure's mean over
// its runs with the range (min–max) of the runs; then, per seed, each agent's replay of its run
// from that seed's snapshot: the same moment, the same surprises, one link per agent.
// data-testids: seeds-panel, seeds-table, seed-spread-<agent>-<i> (the i-th measure's cell),
// seed-replays, seed-replays-<seed>, seed-replay-<seed>-<agent>.
import { Link } from "react-router-dom";
import type { Comparison } from "../../lib/comparisons/measures";
import { seedReplays, spreadRows } from "../../lib/comparisons/seeds";

function testName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, "-");
}

export function SeedsPanel({ comparison }: { comparison: Comparison }) {
  const seeds = comparison.seeds ?? [];
  const agents = comparison.agents.map((agent) => ({ agent, rows: spreadRows(agent.runs ?? []) }));
  const labels = agents[0]?.rows.map((r) => r.label) ?? [];
  const replays = seedReplays(comparison.agents, seeds);
  return (
    <section data-testid="seeds-panel" aria-labelledby="seeds-title">
      <h2 id="seeds-title">Over {seeds.length} seeds</h2>
      <p className="muted">
        Each agent ran once from each seed&apos;s snapshot ({seeds.join(", ")}); every agent met the same surprises from
        the same seed. Each cell is the mean over the seeds, with the lowest and highest run in brackets (min–max).
      </p>
      <div className="table-scroll">
        <table className="comparisons-table" data-testid="seeds-table">
          <thead>
            <tr>
              <th scope="col">Agent</th>
              {labels.map((label) => <th key={label} scope="col">{label}</th>)}
            </tr>
          </thead>
          <tbody>
            {agents.map(({ agent, rows }) => (
              <tr key={agent.name}>
                <th scope="row">{agent.name}</th>
                {rows.map((r, i) => (
                  <td key={r.label} data-testid={`seed-spread-${testName(agent.name)}-${i}`}
                    title={r.spread ? `${r.spread.n} of ${seeds.length} runs measured it` : "no run measured it"}>{r.text}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h3>Replays of the same moment</h3>
      <ul className="seed-replays" data-testid="seed-replays">
        {replays.map(({ seed, replays: links }) => (
          <li key={seed} data-testid={`seed-replays-${seed}`}>
            seed {seed}:{" "}
            {links.map(({ name, path }, i) => (
              <span key={name}>
                {i > 0 ? ", " : null}
                {path ? <Link to={path} data-testid={`seed-replay-${seed}-${testName(name)}`}>{name}</Link>
                  : <span className="muted">{name} (not recorded)</span>}
              </span>
            ))}
          </li>
        ))}
      </ul>
    </section>
  );
}
