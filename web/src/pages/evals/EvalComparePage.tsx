// Evals side by side (/evals/compare?ids=a,b,...): their metrics as one chart, each metric's bars
// (value ± stderr) next to each other in the evals' colours, the same metrics as a table, and each
// sample's score in one column per eval (a cell opens that eval's transcript of it). Evals of
// different tasks are shown, with a warning: their samples do not match.
// data-testid: evals-compare-page, compare-legend, compare-metrics, compare-metric-row (data-key),
// compare-samples, compare-sample-row (data-sample, data-epoch), compare-sample-score,
// compare-task-warning, compare-error.
import { useEffect, useMemo, useState } from "react";
import { Link, useSearchParams } from "react-router-dom";
import { type EvalDetail, evals } from "../../api/evals";
import { errorText } from "../../lib/errors";
import { compareMetrics, compareSamples, comparedIds, flatSamples, sampleScoreNames, scoreText } from "../../lib/evals/results";
import { valueText } from "../../lib/evals/status";
import { MetricChart } from "./MetricChart";
import "../experiments/experiments.css";
import "./evals.css";

const COLOURS = ["#2457d6", "#d6732b", "#1d7a3a", "#8e44ad", "#b3261e", "#5b6472"];

export function EvalComparePage() {
  const [params] = useSearchParams();
  const ids = useMemo(() => comparedIds(params.get("ids")), [params]);
  const [found, setFound] = useState<EvalDetail[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [score, setScore] = useState("");

  useEffect(() => {
    Promise.all(ids.map((id) => evals.get(id))).then(setFound, (e: unknown) => setError(errorText(e)));
  }, [ids]);

  if (error) return <p className="error" role="alert" data-testid="compare-error">{error}</p>;
  if (ids.length < 2) return <p className="error" role="alert" data-testid="compare-error">Pick two or more evals on the <Link to="/evals">Evals page</Link>.</p>;
  if (!found) return <p className="muted">Loading…</p>;
  const metrics = compareMetrics(found);
  const flat = found.map((x) => ({ ...x, samples: flatSamples(x.samples) }));
  const names = sampleScoreNames(flat.flatMap((x) => x.samples));
  const chosen = names.includes(score) ? score : names[0] ?? "";
  const samples = compareSamples(flat, chosen);
  const name = (x: EvalDetail) => `${found.indexOf(x) + 1}. ${x.model} · ${x.id}`;
  const rows = metrics.flatMap((m) => m.values.flatMap((bar, i) => (bar ? [{
    key: m.key, label: `${m.metric} (${m.score}) · ${i + 1}`, evalId: found[i].id, value: bar.value, stderr: bar.stderr, tone: i,
  }] : [])));
  return (
    <div className="evals-page" data-testid="evals-compare-page">
      <header>
        <p className="muted"><Link to="/evals">Evals</Link> / compare</p>
        <h1>{found.length} evals of <code>{found[0].task}</code></h1>
        {found.some((x) => x.task !== found[0].task) ? (
          <p className="experiment-reason" data-testid="compare-task-warning">These evals are of different tasks: their samples do not match.</p>
        ) : null}
        <ul className="evals-legend" data-testid="compare-legend">
          {found.map((x, i) => (
            <li key={x.id}><span className="swatch" style={{ background: COLOURS[i % COLOURS.length] }} />
              <Link to={`/evals/${encodeURIComponent(x.id)}`}>{name(x)}</Link></li>
          ))}
        </ul>
      </header>
      <section className="experiments-panel" data-testid="compare-metrics">
        <h2>Metrics</h2>
        <MetricChart rows={rows} title={`Metrics of ${found.length} evals side by side`} />
        <table className="experiments-table evals-table">
          <thead><tr><th scope="col">Metric</th>{found.map((x) => <th scope="col" key={x.id}>{name(x)}</th>)}</tr></thead>
          <tbody>
            {metrics.map((m) => (
              <tr key={m.key} data-testid="compare-metric-row" data-key={m.key}>
                <th scope="row">{m.metric} <span className="muted">({m.score})</span></th>
                {m.values.map((bar, i) => <td key={found[i].id} className="num">{bar ? valueText(bar.value, bar.stderr) : "–"}</td>)}
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section className="experiments-panel" data-testid="compare-samples">
        <h2>Samples</h2>
        {names.length > 1 ? (
          <label>Score{" "}
            <select value={chosen} onChange={(e) => setScore(e.target.value)}>{names.map((n) => <option key={n}>{n}</option>)}</select>
          </label>
        ) : null}
        <div className="evals-table-scroll"><table className="experiments-table evals-table">
          <thead>
            <tr><th scope="col">Sample</th><th scope="col">Epoch</th><th scope="col">Input</th>
              {found.map((x) => <th scope="col" key={x.id}>{chosen} · {name(x)}</th>)}</tr>
          </thead>
          <tbody>
            {samples.map((row) => (
              <tr key={row.key} data-testid="compare-sample-row" data-sample={row.sampleId} data-epoch={row.epoch}>
                <td className="nowrap">{row.sampleId}</td>
                <td className="num">{row.epoch}</td>
                <td><div className="evals-sample-text" title={row.input}>{row.input}</div></td>
                {row.scores.map((value, i) => (
                  <td key={found[i].id} className="score" data-testid="compare-sample-score">
                    {row.links[i] ? <a href={row.links[i] ?? ""} target="_blank" rel="noopener">{scoreText(value)}</a> : "–"}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table></div>
      </section>
    </div>
  );
}
