// One eval (/evals/{id}): its status, task, model and machine; while it runs, its live progress
// (samples done of the total, errors, the model's tokens; read again every 2 s) and Cancel (asked
// first); then a chart of each metric with its error bar (± stderr), its logs (each opens in
// Inspect's log viewer), its samples (sort and filter by score, each transcript in the viewer) and
// links to compare it with other evals of the same task.
// data-testid: eval-page, eval-status, eval-status-reason, eval-progress, eval-progress-done,
// eval-progress-errors, eval-progress-tokens, eval-cancel, eval-cancel-dialog, eval-notes,
// eval-metrics, eval-log-viewer, eval-compare-with, eval-error.
import { type ReactNode, useCallback, useEffect, useState } from "react";
import { Link, useParams } from "react-router-dom";
import { type Eval, type EvalDetail, evals } from "../../api/evals";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { errorText } from "../../lib/errors";
import { metricBars } from "../../lib/evals/results";
import { evalActive, evalStatusView, progressText } from "../../lib/evals/status";
import { timeText } from "../../lib/experiments/status";
import { MetricChart } from "./MetricChart";
import { SamplesTable } from "./SamplesTable";
import "../experiments/experiments.css";
import "./evals.css";

export function EvalPage() {
  const { evalId = "" } = useParams();
  const [detail, setDetail] = useState<EvalDetail | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [others, setOthers] = useState<Eval[]>([]);
  const [asking, setAsking] = useState(false);
  const [cancelling, setCancelling] = useState(false);
  const [cancelError, setCancelError] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      setDetail(await evals.get(evalId));
      setError(null);
    } catch (e) {
      setError(errorText(e));
    }
  }, [evalId]);
  useEffect(() => { void load(); }, [load]);
  const active = detail !== null && evalActive(detail.status);
  useEffect(() => {
    if (!active) return undefined;
    const timer = window.setInterval(() => void load(), 2000);
    return () => window.clearInterval(timer);
  }, [active, load]);
  useEffect(() => {
    if (!detail || active) return;
    evals.list().then((all) => setOthers(all.filter((x) => x.task === detail.task && x.id !== detail.id && x.scores.length)), () => undefined);
  }, [detail, active]);

  async function cancel() {
    setCancelling(true);
    setCancelError(null);
    try {
      await evals.cancel(evalId);
      setAsking(false);
      await load();
    } catch (e) {
      setCancelError(errorText(e));
    } finally {
      setCancelling(false);
    }
  }

  if (error && !detail) return <p className="error" role="alert" data-testid="eval-error">{error}</p>;
  if (!detail) return <p className="muted">Loading…</p>;
  const status = evalStatusView(detail.status);
  const bars = metricBars(detail.scores).map((bar) => ({
    key: bar.key, label: `${bar.metric} (${bar.score})`, evalId: detail.id, value: bar.value, stderr: bar.stderr, tone: 0,
  }));
  const { progress } = detail;
  return (
    <div className="evals-page" data-testid="eval-page">
      <header>
        <p className="muted"><Link to="/evals">Evals</Link> / {detail.id}</p>
        <h1><code>{detail.task}</code></h1>
        <p>
          <span className={`experiment-status big tone-${status.tone}`} data-testid="eval-status">{status.label}</span>{" "}
          <code>{detail.model}</code> on <strong>{detail.machine_name}</strong>
          <span className="muted"> · made {timeText(detail.created_at)} UTC{detail.ended_at ? `, ended ${timeText(detail.ended_at)} UTC` : ""}</span>
        </p>
        {detail.status_reason ? <p className="experiment-reason" data-testid="eval-status-reason">{detail.status_reason}</p> : null}
      </header>
      <section className="experiments-panel" data-testid="eval-progress">
        <h2>Progress</h2>
        <div className="evals-progress">
          <span data-testid="eval-progress-done">{progressText(progress)}</span>
          {progress.total > 0 ? <progress max={progress.total} value={progress.done} aria-label="Samples done" /> : null}
          <span data-testid="eval-progress-errors">{progress.errors} {progress.errors === 1 ? "error" : "errors"}</span>
          <span data-testid="eval-progress-tokens">{progress.tokens} tokens</span>
          <span className="muted">
            Its log: <Link to={`/experiments/${encodeURIComponent(detail.experiment_id)}`}>experiment {detail.experiment_id}</Link>
          </span>
        </div>
        {active ? (
          <div className="experiment-actions">
            <button type="button" data-testid="eval-cancel" onClick={() => setAsking(true)}>Cancel</button>
          </div>
        ) : null}
      </section>
      {detail.notes.length ? (
        <ul className="muted" data-testid="eval-notes">{detail.notes.map((note) => <li key={note}>{note}</li>)}</ul>
      ) : null}
      {bars.length ? (
        <section className="experiments-panel" data-testid="eval-metrics">
          <h2>Metrics</h2>
          <MetricChart rows={bars} title={`Metrics of ${detail.task} on ${detail.model}`} />
          {detail.logs.map((log) => (
            <p key={log.name} className="muted">
              Log <code>{log.name}</code> ({log.status}):{" "}
              <a href={`/v0/evals/${encodeURIComponent(detail.id)}/viewer?log_file=logs/${encodeURIComponent(log.name)}`}
                 target="_blank" rel="noopener" data-testid="eval-log-viewer">open in Inspect's log viewer</a>
            </p>
          ))}
          {others.length ? (
            <p data-testid="eval-compare-with">Compare with another eval of this task:{" "}
              {others.slice(0, 5).map((x) => (
                <Link key={x.id} to={`/evals/compare?ids=${encodeURIComponent(detail.id)},${encodeURIComponent(x.id)}`}>
                  {x.model} ({timeText(x.created_at)})
                </Link>
              )).reduce<ReactNode[]>((all, link, i) => (i ? [...all, ", ", link] : [link]), [])}
            </p>
          ) : null}
        </section>
      ) : null}
      {detail.samples.length ? <SamplesTable samples={detail.samples} /> : null}
      <ConfirmDialog open={asking} title="Cancel this eval?" confirmLabel="Cancel the eval" busyLabel="Cancelling…"
        busy={cancelling} error={asking ? cancelError : null} testId="eval-cancel-dialog" cancelLabel="Keep it running"
        onConfirm={() => void cancel()} onCancel={() => setAsking(false)}>
        <p>Its process on <strong>{detail.machine_name}</strong> is stopped; the logs it wrote are brought back.</p>
      </ConfirmDialog>
    </div>
  );
}
