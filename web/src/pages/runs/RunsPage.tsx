// The Runs page (/runs?tag=&group=&experiment_id=): the team's training runs, newest first, with
// each metric's final value and each hyperparameter as columns; ticking runs charts a chosen
// metric for them: the runs of one group as their mean and min-max band, other runs as lines
// (lib/runs/runs.ts), smoothed by an exponential moving average (TensorBoard's), against steps,
// frames or wall time since each run's first point.
// data-testid: runs-page, runs-filter-tag, runs-filter-group, runs-filter-experiment, runs-table,
// run-row (data-run-id), run-tick, run-row-name, run-row-group (a button: filters by the group), run-row-final-<metric>, run-row-hparam-<name>,
// runs-empty, runs-error, runs-metric, runs-axis, runs-smoothing, runs-smoothing-value,
// runs-chart (RunsChart.tsx), runs-chart-hint.
import { useCallback, useEffect, useMemo, useState } from "react";
import { Link, useSearchParams } from "react-router-dom";
import { type Run, type RunFilters, runs as runsApi } from "../../api/runs";
import { errorText } from "../../lib/errors";
import { formatNumber } from "../../lib/format";
import { chartOf, finalValue, hparamText, type SeriesData, tableColumns, type XAxis } from "../../lib/runs/runs";
import { RunsChart } from "./RunsChart";
import "./runs.css";

const FILTERS = [["tag", "Tag", "runs-filter-tag"], ["group", "Group", "runs-filter-group"],
  ["experiment_id", "Experiment", "runs-filter-experiment"]] as const;

export function createdText(iso: string): string {
  return iso.replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

export function RunsPage() {
  const [params, setParams] = useSearchParams();
  const filters: RunFilters = useMemo(() => ({
    tag: params.get("tag") ?? "", group: params.get("group") ?? "", experiment_id: params.get("experiment_id") ?? "",
  }), [params]);
  const [list, setList] = useState<Run[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [ticked, setTicked] = useState<Set<string>>(new Set());
  const [metric, setMetric] = useState<string>("");
  const [axis, setAxis] = useState<XAxis>("step");
  const [smoothing, setSmoothing] = useState(0);
  const [series, setSeries] = useState<Map<string, SeriesData | undefined>>(new Map());

  const load = useCallback(async () => {
    setError(null);
    try {
      setList(await runsApi.list(filters));
    } catch (e) {
      setError(errorText(e));
    }
  }, [filters]);
  useEffect(() => { void load(); }, [load]);

  const columns = useMemo(() => tableColumns(list ?? []), [list]);
  useEffect(() => {
    if (!columns.metrics.includes(metric) && columns.metrics.length > 0) setMetric(columns.metrics[0]);
  }, [columns, metric]);

  const tickedRuns = useMemo(() => (list ?? []).filter((r) => ticked.has(r.id)), [list, ticked]);
  // each ticked run's series of the chosen metric, read once per (run, metric)
  useEffect(() => {
    if (!metric) return;
    const missing = tickedRuns.filter((r) => !series.has(`${r.id}\n${metric}`));
    if (missing.length === 0) return;
    let stale = false;
    void Promise.all(missing.map(async (r) => {
      try {
        return [r.id, (await runsApi.metrics(r.id, [metric])).series[metric]] as const;
      } catch {
        return [r.id, undefined] as const;
      }
    })).then((found) => {
      if (stale) return;
      setSeries((old) => {
        const next = new Map(old);
        for (const [id, s] of found) next.set(`${id}\n${metric}`, s);
        return next;
      });
    });
    return () => { stale = true; };
  }, [tickedRuns, metric, series]);

  const chart = useMemo(() => {
    const byRun = new Map(tickedRuns.map((r) => [r.id, series.get(`${r.id}\n${metric}`)]));
    return chartOf(tickedRuns, byRun, axis, smoothing);
  }, [tickedRuns, series, metric, axis, smoothing]);

  const setFilter = (name: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value); else next.delete(name);
    setParams(next, { replace: true });
  };
  const tick = (id: string, on: boolean) => setTicked((old) => {
    const next = new Set(old);
    if (on) next.add(id); else next.delete(id);
    return next;
  });

  return (
    <section className="runs-page" data-testid="runs-page">
      <h1>Training runs</h1>
      <p className="muted">Scalars your training logged against steps (<code>/v0/runs</code>). Tick runs to chart a metric:
        the seeds of one group are drawn as their mean with the min–max band shaded.</p>
      <form className="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        {FILTERS.map(([name, label, testId]) => (
          <label key={name}>
            {label}
            <input key={filters[name]} data-testid={testId} defaultValue={filters[name]} placeholder="any"
              onBlur={(e) => setFilter(name, e.target.value.trim())}
              onKeyDown={(e) => { if (e.key === "Enter") setFilter(name, (e.target as HTMLInputElement).value.trim()); }} />
          </label>
        ))}
      </form>
      {error ? <p className="error" data-testid="runs-error">{error} <button type="button" onClick={() => void load()}>Retry</button></p> : null}
      {list !== null && list.length === 0 ? <p className="muted" data-testid="runs-empty">No runs{params.toString() ? " match these filters" : " yet: log some with platform_sdk.runs"}.</p> : null}
      {list !== null && list.length > 0 ? (
        <div className="runs-table-wrap">
          <table className="runs-table" data-testid="runs-table">
            <thead>
              <tr>
                <th aria-label="chart" />
                <th>Name</th><th>Group</th><th>Seed</th><th>State</th><th>Tags</th><th>Created</th>
                {columns.metrics.map((m) => <th key={`m-${m}`} className="metric num" title="final value">{m}</th>)}
                {columns.hparams.map((h) => <th key={`h-${h}`} title="hyperparameter">{h}</th>)}
              </tr>
            </thead>
            <tbody>
              {list.map((run) => (
                <tr key={run.id} data-testid="run-row" data-run-id={run.id}>
                  <td><input type="checkbox" data-testid="run-tick" aria-label={`chart ${run.name}`} checked={ticked.has(run.id)}
                    onChange={(e) => tick(run.id, e.target.checked)} /></td>
                  <td data-testid="run-row-name"><Link to={`/runs/${encodeURIComponent(run.id)}`}>{run.name}</Link></td>
                  <td><button type="button" className="link-button" data-testid="run-row-group" title="only this group"
                    onClick={() => setFilter("group", run.group)}>{run.group}</button></td>
                  <td className="num">{run.seed ?? "–"}</td>
                  <td className={`runs-state-${run.state}`}>{run.state}</td>
                  <td>{run.tags.map((t) => <span key={t} className="runs-tag">{t}</span>)}</td>
                  <td className="nowrap">{createdText(run.created_at)}</td>
                  {columns.metrics.map((m) => (
                    <td key={`m-${m}`} className="num" data-testid={`run-row-final-${m}`}>{formatNumber(finalValue(run, m), 4)}</td>
                  ))}
                  {columns.hparams.map((h) => (
                    <td key={`h-${h}`} data-testid={`run-row-hparam-${h}`}>{hparamText(run.hparams[h])}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {list !== null && list.length > 0 ? (
        <section className="runs-chart-section">
          <div className="runs-controls">
            <label>Metric
              <select data-testid="runs-metric" value={metric} onChange={(e) => setMetric(e.target.value)}>
                {columns.metrics.map((m) => <option key={m} value={m}>{m}</option>)}
              </select>
            </label>
            <label>X axis
              <select data-testid="runs-axis" value={axis} onChange={(e) => setAxis(e.target.value as XAxis)}>
                <option value="step">steps</option>
                <option value="frames">frames</option>
                <option value="time">wall time</option>
              </select>
            </label>
            <label>Smoothing <span data-testid="runs-smoothing-value">{smoothing.toFixed(2)}</span>
              <input type="range" data-testid="runs-smoothing" min={0} max={0.99} step={0.01} value={smoothing}
                onChange={(e) => setSmoothing(Number(e.target.value))} />
            </label>
          </div>
          {tickedRuns.length === 0
            ? <p className="muted" data-testid="runs-chart-hint">Tick runs above to chart {metric || "a metric"}.</p>
            : <RunsChart chart={chart} axis={axis} smoothing={smoothing} testId="runs-chart" title={metric} />}
        </section>
      ) : null}
    </section>
  );
}
