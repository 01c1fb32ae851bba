// A comparison's page (`/comparisons/:comparisonId`): what was compared (environment, steps,
// window, warm-up, the snapshot every agent started from, the world changes), one row per agent
// with its measures and a link to its recording's replay, and one chart of every agent's reward
// per step over the window with the changes marked and each recovery shaded.
//
// data-testids:
//   comparison-title, comparison-error, comparison-facts, comparison-changes with change-<i>,
//   agents-table, agent-row-<name> (names with characters other than letters, digits, '_' and
//   '-' have them as '-'), and in each row name-<name>, success-<name>, recovery-<name> (one
//   recovery-<name>-<i> per change), retention-<name>, compute-<name>, episodes-<name>,
//   steps-<name>, replay-<name> (the link, when it was recorded); comparison-chart (its
//   data-series, data-changes and data-bands count what it draws), chart-legend-<name>;
//   SeedsPanel's, for a comparison over several seeds; SideBySidePanel's (the agents' replays at
//   one cursor, shared with the chart: data-cursor on comparison-chart is its session step).
import { useEffect, useMemo, useState } from "react";
import { Link, useParams } from "react-router-dom";
import { api, must } from "../../api/client";
import { agentColor, comparisonChart } from "../../lib/comparisons/chart";
import {
  type AgentRow, agentRow, type Comparison, createdText, timelineOf,
} from "../../lib/comparisons/measures";
import { SeedsPanel } from "./SeedsPanel";
import { SideBySidePanel } from "./SideBySidePanel";
import { changeGroups } from "../../lib/worldChanges/changeGroups";
import { ComparisonChart } from "./ComparisonChart";
import { errorMessage } from "./errorMessage";
import "./comparisons.css";

type Loaded = { state: "loading" } | { state: "error"; message: string } | { state: "ready"; value: Comparison };

function testName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, "-");
}

export function ComparisonPage() {
  const { comparisonId = "" } = useParams();
  const [loaded, setLoaded] = useState<Loaded>({ state: "loading" });

  useEffect(() => {
    let live = true;
    setLoaded({ state: "loading" });
    must(api.GET("/v0/comparisons/{comparison_id}", { params: { path: { comparison_id: comparisonId } } }))
      .then((value) => { if (live) setLoaded({ state: "ready", value }); })
      .catch((e: unknown) => { if (live) setLoaded({ state: "error", message: errorMessage(e) }); });
    return () => { live = false; };
  }, [comparisonId]);

  return (
    <section className="comparison-page">
      <p className="breadcrumbs"><Link to="/comparisons">Comparisons</Link> / <code>{comparisonId}</code></p>
      {loaded.state === "loading" && <p className="muted">Loading comparison…</p>}
      {loaded.state === "error" && <p className="error" role="alert" data-testid="comparison-error">{loaded.message}</p>}
      {loaded.state === "ready" && <ComparisonView comparison={loaded.value} />}
    </section>
  );
}

function ComparisonView({ comparison }: { comparison: Comparison }) {
  const rows = useMemo(() => comparison.agents.map(agentRow), [comparison]);
  const chart = useMemo(() => comparisonChart(comparison), [comparison]);
  const changes = useMemo(() => changeGroups(timelineOf(comparison)), [comparison]);
  const [cursor, setCursor] = useState<number | null>(null);
  const facts: [string, string][] = [
    ["Environment", comparison.env],
    ["Stored", createdText(comparison.created)],
    ["Steps per agent", String(comparison.steps ?? "–")],
    ["Window", comparison.window === null || comparison.window === undefined ? "–" : `${comparison.window} steps`],
    ["Warm-up", comparison.warmup === null || comparison.warmup === undefined ? "–" : `${comparison.warmup} steps`],
    ["Seed", String(comparison.seed ?? "–")],
    ["Started from", comparison.snapshot_id ?? "–"],
  ];
  return (
    <>
      <h1 data-testid="comparison-title">{rows.map((r) => r.name).join(" vs ")} on <code>{comparison.env}</code></h1>
      <dl className="comparison-facts" data-testid="comparison-facts">
        {facts.map(([name, value]) => (
          <div key={name}><dt>{name}</dt><dd>{value}</dd></div>
        ))}
      </dl>
      <h2>World changes</h2>
      {changes.length === 0 ? (
        <p className="muted" data-testid="comparison-changes">None: the agents met the same world throughout.</p>
      ) : (
        <ul className="comparison-changes" data-testid="comparison-changes">
          {changes.map((change, i) => (
            <li key={change.at} data-testid={`change-${i}`}>at session step <b>{change.at}</b>: {change.label}</li>
          ))}
        </ul>
      )}
      <h2>Agents</h2>
      <div className="table-scroll">
        <table className="comparisons-table agents-table" data-testid="agents-table">
          <thead>
            <tr>
              <th scope="col">Agent</th>
              <th scope="col">Success</th>
              <th scope="col">Recovery per change</th>
              <th scope="col">Retention per return</th>
              <th scope="col" className="num">Compute per decision</th>
              <th scope="col" className="num">Episodes</th>
              <th scope="col" className="num">Steps</th>
              <th scope="col">Recording</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row, i) => <AgentTableRow key={row.name} row={row} color={agentColor(i)} />)}
          </tbody>
        </table>
      </div>
      <p className="muted measures-note">
        Recovery: steps after a change until the reward per step, averaged over the window, is back within 10% of its
        level before it (0: the first window already was). Retention: 1 − (before − after) / |before| when the world
        returns to an earlier state. {(comparison.seeds ?? []).length > 1
          ? "The table gives each agent's run from the first seed; the seeds' means and ranges follow."
          : "Each agent ran once: small differences may be noise."}
      </p>
      {(comparison.seeds ?? []).length > 1 ? <SeedsPanel comparison={comparison} /> : null}
      <h2>Reward per step</h2>
      {chart.x.length === 0 ? (
        <p className="muted">No agent has a full window of rewards to plot.</p>
      ) : (
        <>
          <ComparisonChart chart={chart} cursor={cursor} onPick={setCursor} />
          <ul className="chart-key">
            {chart.series.map((s) => (
              <li key={s.label} data-testid={`chart-legend-${testName(s.label)}`}>
                <span className="swatch" style={{ background: s.color }} /> {s.label}
              </li>
            ))}
            {chart.bands.length > 0 && <li className="muted">shaded: each agent&apos;s recovery after a change</li>}
            {chart.changes.length > 0 && <li className="muted">dashed: a world change</li>}
            {cursor !== null && <li className="muted">solid: the side-by-side replay&apos;s step</li>}
          </ul>
        </>
      )}
      <SideBySidePanel comparison={comparison} cursor={cursor} onCursor={setCursor} />
    </>
  );
}

function AgentTableRow({ row, color }: { row: AgentRow; color: string }) {
  const id = testName(row.name);
  return (
    <tr data-testid={`agent-row-${id}`}>
      <th scope="row" data-testid={`name-${id}`}>
        <span className="swatch" style={{ background: color }} /> {row.name}
        {row.agent && <div className="muted small"><code>{row.agent}</code></div>}
      </th>
      <td data-testid={`success-${id}`}>{row.success}</td>
      <td data-testid={`recovery-${id}`}>
        {row.recovery.length === 0 ? "–" : (
          <ul className="cell-list">
            {row.recovery.map((r, i) => (
              <li key={r.at} data-testid={`recovery-${id}-${i}`}>
                at {r.at}: <b>{r.text}</b>{r.worst && <span className="muted"> ({r.worst})</span>}
              </li>
            ))}
          </ul>
        )}
      </td>
      <td data-testid={`retention-${id}`}>
        {row.retention.length === 0 ? "–" : (
          <ul className="cell-list">
            {row.retention.map((r) => (
              <li key={r.at}>
                at {r.at}{r.returnsTo !== null && <span className="muted"> (the world of step {r.returnsTo})</span>}: <b>{r.text}</b>
              </li>
            ))}
          </ul>
        )}
      </td>
      <td className="num" data-testid={`compute-${id}`}>{row.compute}</td>
      <td className="num" data-testid={`episodes-${id}`}>{row.episodes}</td>
      <td className="num" data-testid={`steps-${id}`}>{row.steps}</td>
      <td>
        {row.replay === null ? <span className="muted">not recorded</span> : (
          <Link to={row.replay} data-testid={`replay-${id}`} title="Open its replay"><code className="nowrap">{row.recordingId}</code></Link>
        )}
      </td>
    </tr>
  );
}
