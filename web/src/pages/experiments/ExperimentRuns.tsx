// The experiment page's "Training runs" section: the runs its command started with
// platform_sdk.runs (`GET /v0/runs?experiment_id=`), each with its state, a link to its page and
// its roles from the summary (`roles/<role>/<field>`: count, healthy, where) as a small table, and
// the runs' headline curve on a RunsChart (a metric picker starting on
// env_runners/episode_return_mean, else episode/score, else the first metric). Read again every
// 5 s while the experiment is active (and briefly after it ended while a run is still running;
// lib/runs/experimentRuns.ts), each run's series read again only when it logged a later point.
// data-testid: experiment-runs (data-polling: "true" while it reads the runs again; data-reads: how many
// times it has read them), experiment-runs-all,
// experiment-runs-empty, experiment-runs-error, experiment-run (data-run-id, data-state), experiment-run-link,
// experiment-run-state, experiment-run-roles, experiment-run-role (data-role), experiment-run-role-count,
// -healthy, -where, -other; experiment-runs-metric, experiment-runs-chart (RunsChart.tsx).
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { Link } from "react-router-dom";
import type { Experiment } from "../../api/experiments";
import { type Run, runs as runsApi } from "../../api/runs";
import { errorText } from "../../lib/errors";
import { isActive } from "../../lib/experiments/status";
import {
  degraded, headlineMetric, roleLabel, rolesOf, runsRefreshMs, seriesKey, summaryText,
} from "../../lib/runs/experimentRuns";
import { type ChartData, chartOf, metricNames, type SeriesData } from "../../lib/runs/runs";
import { RunsChart } from "../runs/RunsChart";
import "../runs/runs.css";
import "./experimentRuns.css";

interface Props {
  experimentId: string;
  /** The experiment as the page last read it (null while loading). */
  experiment: Experiment | null;
}

function RunRoles({ run }: { run: Run }) {
  const rows = rolesOf(run.summary);
  if (rows.length === 0) return null;
  const withOther = rows.some((r) => r.other.length > 0);
  return (
    <table className="experiment-run-roles" data-testid="experiment-run-roles">
      <thead>
        <tr><th>Role</th><th className="num">Count</th><th className="num">Healthy</th><th>Where</th>{withOther ? <th>Other</th> : null}</tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.role} data-testid="experiment-run-role" data-role={row.role}>
            <td>{roleLabel(row.role)}</td>
            <td className="num" data-testid="experiment-run-role-count">{summaryText(row.count)}</td>
            <td className={degraded(row) ? "num experiment-run-role-degraded" : "num"} data-testid="experiment-run-role-healthy"
              title={degraded(row) ? "fewer healthy than counted" : undefined}>{summaryText(row.healthy)}</td>
            <td data-testid="experiment-run-role-where" title={row.where === "local" ? "in the algorithm's own process" : undefined}>{row.where}</td>
            {withOther ? (
              <td data-testid="experiment-run-role-other">
                {row.other.map(([field, value]) => <span key={field} className="experiment-run-role-field">{field} {summaryText(value)}</span>)}
              </td>
            ) : null}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function ExperimentRuns({ experimentId, experiment }: Props) {
  const [list, setList] = useState<Run[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loads, setLoads] = useState(0);
  const [chosen, setChosen] = useState("");
  // each run's latest series read of a metric (by `<run id>\n<metric>`), with the last step it was read at
  const [series, setSeries] = useState<Map<string, { last: number; data: SeriesData | undefined }>>(new Map());
  const asked = useRef(new Set<string>());

  const load = useCallback(async () => {
    try {
      setList(await runsApi.list({ experiment_id: experimentId }));
      setError(null);
    } catch (e) {
      setError(errorText(e));
    } finally {
      setLoads((n) => n + 1);
    }
  }, [experimentId]);
  useEffect(() => {
    setList(null);
    setSeries(new Map());
    asked.current = new Set();
    void load();
  }, [load]);

  // once more when the experiment ends while the page is open: its runs are likely finished by then
  const active = experiment ? isActive(experiment.status) : null;
  const wasActive = useRef<boolean | null>(null);
  useEffect(() => {
    if (wasActive.current === true && active === false) void load();
    wasActive.current = active;
  }, [active, load]);

  const delay = runsRefreshMs(experiment ? { active: active === true, ended_at: experiment.ended_at } : null,
    list, Date.now() / 1000);
  useEffect(() => {
    if (delay === null) return undefined;
    const timer = window.setTimeout(() => void load(), delay);
    return () => window.clearTimeout(timer);
  }, [delay, load, loads]);

  const names = useMemo(() => metricNames(list ?? []), [list]);
  const metric = names.includes(chosen) ? chosen : headlineMetric(names);
  const charted = useMemo(() => (list ?? []).filter((r) => r.metrics.some((m) => m.name === metric)), [list, metric]);

  // each charted run's series of the metric, read again only when it logged a later point
  useEffect(() => {
    const missing = charted.filter((r) => !asked.current.has(seriesKey(r, metric)));
    if (missing.length === 0) return;
    for (const r of missing) asked.current.add(seriesKey(r, metric));
    void Promise.all(missing.map(async (r) => {
      const last = r.metrics.find((m) => m.name === metric)?.last_step ?? -1;
      try {
        return [r.id, last, (await runsApi.metrics(r.id, [metric])).series[metric]] as const;
      } catch {
        return [r.id, last, undefined] as const;
      }
    })).then((found) => setSeries((old) => {
      const next = new Map(old);
      for (const [id, last, data] of found) {
        const key = `${id}\n${metric}`;
        const known = next.get(key);
        if (!known || last > known.last || (data && !known.data)) next.set(key, { last, data: data ?? known?.data });
      }
      return next;
    }));
  }, [charted, metric]);

  // the same chart object while nothing drawn changed, so a poll that brings no new point keeps
  // the canvas (and a zoom the reader dragged) as it is
  const drawn = useRef<{ key: string; chart: ChartData } | null>(null);
  const chart = useMemo(() => {
    const byRun = new Map(charted.map((r) => [r.id, series.get(`${r.id}\n${metric}`)]));
    const key = [metric, ...charted.map((r) => `${r.id}\t${r.name}\t${r.group}\t${r.seed ?? ""}\t${byRun.get(r.id)?.last ?? "none"}\t${byRun.get(r.id)?.data ? 1 : 0}`)].join("\n");
    if (drawn.current?.key !== key) {
      drawn.current = { key, chart: chartOf(charted, new Map([...byRun].map(([id, s]) => [id, s?.data])), "step", 0) };
    }
    return drawn.current.chart;
  }, [charted, series, metric]);

  return (
    <section className="experiments-panel experiment-runs" data-testid="experiment-runs" data-polling={delay !== null ? "true" : "false"}
      data-reads={loads}>
      <header className="experiment-runs-head">
        <h2>Training runs</h2>
        {list && list.length > 0 ? (
          <Link data-testid="experiment-runs-all" to={`/runs?experiment_id=${encodeURIComponent(experimentId)}`}>Compare on the Runs page</Link>
        ) : null}
      </header>
      {error ? <p className="error" data-testid="experiment-runs-error">{error}</p> : null}
      {list === null && !error ? <p className="muted">Loading…</p> : null}
      {list !== null && list.length === 0 ? (
        <p className="muted" data-testid="experiment-runs-empty">
          No training runs yet: a run its command starts with <code>platform_sdk.runs</code> appears here.
        </p>
      ) : null}
      {list !== null && list.length > 0 ? (
        <ul className="experiment-runs-list">
          {list.map((run) => (
            <li key={run.id} data-testid="experiment-run" data-run-id={run.id} data-state={run.state}>
              <div className="experiment-run-head">
                <Link data-testid="experiment-run-link" to={`/runs/${encodeURIComponent(run.id)}`}>{run.name}</Link>
                {run.group !== run.name ? <span className="muted">{run.group}</span> : null}
                {run.seed !== null && run.seed !== undefined ? <span className="muted">seed {run.seed}</span> : null}
                <span className={`runs-state-${run.state}`} data-testid="experiment-run-state">{run.state}</span>
              </div>
              <RunRoles run={run} />
            </li>
          ))}
        </ul>
      ) : null}
      {names.length > 0 ? (
        <div className="experiment-runs-chart">
          <div className="runs-controls">
            <label>Metric
              <select data-testid="experiment-runs-metric" value={metric} onChange={(e) => setChosen(e.target.value)}>
                {names.map((m) => <option key={m} value={m}>{m}</option>)}
              </select>
            </label>
          </div>
          <RunsChart chart={chart} axis="step" smoothing={0} height={260} testId="experiment-runs-chart" title={metric} />
        </div>
      ) : null}
    </section>
  );
}
