// A training run's page (/runs/:runId): its group, seed, state, tags, hyperparameters and summary,
// links to its experiment, sessions and recordings, and a small chart per metric (against steps).
// data-testid: run-page, run-name, run-state, run-tags, run-hparams, run-hparam-<name>,
// run-summary, run-experiment, run-session, run-recording, run-charts, run-chart-<metric> (RunsChart.tsx),
// run-error.
import { useEffect, useMemo, useState } from "react";
import { Link, useParams } from "react-router-dom";
import { type Run, type RunMetrics, runs as runsApi } from "../../api/runs";
import { errorText } from "../../lib/errors";
import { chartOf, hparamText } from "../../lib/runs/runs";
import { RunsChart } from "./RunsChart";
import { createdText } from "./RunsPage";
import "./runs.css";

export function RunPage() {
  const { runId = "" } = useParams();
  const [run, setRun] = useState<Run | null>(null);
  const [metrics, setMetrics] = useState<RunMetrics | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let stale = false;
    setError(null);
    Promise.all([runsApi.get(runId), runsApi.metrics(runId, undefined, 1000)]).then(([r, m]) => {
      if (!stale) { setRun(r); setMetrics(m); }
    }, (e: unknown) => { if (!stale) setError(errorText(e)); });
    return () => { stale = true; };
  }, [runId]);

  const charts = useMemo(() => {
    if (!run || !metrics) return [];
    return Object.keys(metrics.series).sort().map((name) => ({
      name, chart: chartOf([run], new Map([[run.id, metrics.series[name]]]), "step", 0),
    }));
  }, [run, metrics]);

  if (error) return <p className="error" data-testid="run-error">{error} <Link to="/runs">All runs</Link></p>;
  if (!run) return <p className="muted">Loading…</p>;
  const hparams = Object.keys(run.hparams).sort();
  const summary = Object.keys(run.summary).sort();
  return (
    <section className="run-page" data-testid="run-page">
      <p><Link to="/runs">← Runs</Link></p>
      <h1 data-testid="run-name">{run.name}</h1>
      <dl>
        <dt>Id</dt><dd><code>{run.id}</code></dd>
        <dt>Group</dt><dd><Link to={`/runs?group=${encodeURIComponent(run.group)}`}>{run.group}</Link></dd>
        <dt>Seed</dt><dd>{run.seed ?? "–"}</dd>
        <dt>State</dt><dd data-testid="run-state" className={`runs-state-${run.state}`}>{run.state}</dd>
        <dt>Tags</dt><dd data-testid="run-tags">{run.tags.length === 0 ? "–" : run.tags.map((t) => (
          <Link key={t} className="runs-tag" to={`/runs?tag=${encodeURIComponent(t)}`}>{t}</Link>))}</dd>
        <dt>Created</dt><dd>{createdText(run.created_at)}</dd>
        <dt>Updated</dt><dd>{createdText(run.updated_at)}</dd>
        <dt>Experiment</dt><dd>{run.experiment_id
          ? <Link data-testid="run-experiment" to={`/experiments/${encodeURIComponent(run.experiment_id)}`}>{run.experiment_id}</Link>
          : "–"}</dd>
        <dt>Sessions</dt><dd>{run.session_ids.length === 0 ? "–" : run.session_ids.map((s) => (
          <span key={s}><Link data-testid="run-session" to={`/sessions/${encodeURIComponent(s)}`}>{s}</Link> </span>))}</dd>
        <dt>Recordings</dt><dd>{run.recording_ids.length === 0 ? "–" : run.recording_ids.map((r) => (
          <span key={r}><Link data-testid="run-recording" to={`/recordings/${encodeURIComponent(r)}`}>{r}</Link> </span>))}</dd>
      </dl>
      <h2>Hyperparameters</h2>
      {hparams.length === 0 ? <p className="muted">None logged.</p> : (
        <table className="runs-table" data-testid="run-hparams">
          <tbody>{hparams.map((h) => (
            <tr key={h}><th>{h}</th><td data-testid={`run-hparam-${h}`}>{hparamText(run.hparams[h])}</td></tr>))}</tbody>
        </table>
      )}
      {summary.length > 0 ? (
        <>
          <h2>Summary</h2>
          <table className="runs-table" data-testid="run-summary">
            <tbody>{summary.map((k) => <tr key={k}><th>{k}</th><td>{hparamText(run.summary[k])}</td></tr>)}</tbody>
          </table>
        </>
      ) : null}
      <h2>Metrics</h2>
      {charts.length === 0 ? <p className="muted">No metric points yet.</p> : (
        <div className="run-charts" data-testid="run-charts">
          {charts.map(({ name, chart }) => (
            <RunsChart key={name} chart={chart} axis="step" smoothing={0} height={180} legend={false}
              testId={`run-chart-${name.replace(/[^A-Za-z0-9_-]/g, "_")}`}
              title={`${name} (final ${hparamText(run.metrics.find((m) => m.name === name)?.last_value)})`} />
          ))}
        </div>
      )}
    </section>
  );
}
