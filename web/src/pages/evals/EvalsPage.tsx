// The Evals page (/evals): the team's evals, newest first: status in colour, task, model, machine,
// progress, main score ± its standard error, when each was made and ended (UTC); a row's task opens
// its page. Ticking two or more of the same task offers their comparison. While one is active the
// list is read again every 3 s.
// data-testid: evals-page, evals-new, evals-list, eval-row (data-eval-id), eval-row-status,
// eval-row-task, eval-row-model, eval-row-machine, eval-row-progress, eval-row-score,
// eval-row-created, eval-row-ended, eval-row-pick, evals-compare, evals-empty, evals-error.
import { useCallback, useEffect, useState } from "react";
import { Link } from "react-router-dom";
import { type Eval, evals } from "../../api/evals";
import { errorText } from "../../lib/errors";
import { evalActive, evalStatusView, mainScore, progressText } from "../../lib/evals/status";
import { timeText } from "../../lib/experiments/status";
import "../experiments/experiments.css";
import "./evals.css";

export function EvalsPage() {
  const [list, setList] = useState<Eval[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [picked, setPicked] = useState<string[]>([]);

  const load = useCallback(async () => {
    try {
      setList(await evals.list());
      setError(null);
    } catch (e) {
      setError(errorText(e));
    }
  }, []);
  useEffect(() => { void load(); }, [load]);
  const active = (list ?? []).some((x) => evalActive(x.status));
  useEffect(() => {
    if (!active) return undefined;
    const timer = window.setInterval(() => void load(), 3000);
    return () => window.clearInterval(timer);
  }, [active, load]);

  const pickedEvals = (list ?? []).filter((x) => picked.includes(x.id));
  const sameTask = pickedEvals.length >= 2 && pickedEvals.every((x) => x.task === pickedEvals[0].task);
  const toggle = (id: string) => setPicked((now) => (now.includes(id) ? now.filter((x) => x !== id) : [...now, id]));

  return (
    <div className="evals-page" data-testid="evals-page">
      <header className="experiments-head">
        <div>
          <h1>Evals</h1>
          <p className="muted">
            Inspect tasks run against a model on your team's <Link to="/machines">machines</Link>: scores with their standard
            errors, every sample, and each sample's transcript in Inspect's log viewer.
          </p>
        </div>
        <Link to="/evals/new" className="experiments-new-link" data-testid="evals-new">New eval</Link>
      </header>
      {error ? <p className="error" role="alert" data-testid="evals-error">The evals could not be listed: {error}</p> : null}
      {list === null && !error ? <p className="muted">Loading…</p> : null}
      {list !== null && list.length === 0 ? (
        <p className="experiments-empty" data-testid="evals-empty">
          No eval yet. <Link to="/evals/new">Start one</Link>: an Inspect task, a model and a ready machine.
        </p>
      ) : null}
      {list?.length ? (
        <>
          <div className="evals-compare-pick">
            {sameTask ? (
              <Link to={`/evals/compare?ids=${picked.map(encodeURIComponent).join(",")}`} className="experiments-new-link" data-testid="evals-compare">
                Compare {pickedEvals.length} evals
              </Link>
            ) : (
              <span className="muted">Tick two or more evals of the same task to compare them.</span>
            )}
          </div>
          <table className="experiments-table evals-table" data-testid="evals-list">
            <caption className="sr-only">Your team's evals, newest first</caption>
            <thead>
              <tr>
                <th scope="col"><span className="sr-only">Compare</span></th><th scope="col">Status</th><th scope="col">Task</th>
                <th scope="col">Model</th><th scope="col">Machine</th><th scope="col">Progress</th><th scope="col">Main score</th>
                <th scope="col">Created (UTC)</th><th scope="col">Ended (UTC)</th>
              </tr>
            </thead>
            <tbody>
              {list.map((x) => {
                const status = evalStatusView(x.status);
                const score = mainScore(x);
                return (
                  <tr key={x.id} data-testid="eval-row" data-eval-id={x.id}>
                    <td><input type="checkbox" aria-label={`Compare ${x.id}`} data-testid="eval-row-pick" checked={picked.includes(x.id)} onChange={() => toggle(x.id)} /></td>
                    <td><span className={`experiment-status tone-${status.tone}`} data-testid="eval-row-status">{status.label}</span></td>
                    <td><Link to={`/evals/${encodeURIComponent(x.id)}`} data-testid="eval-row-task"><code>{x.task}</code></Link></td>
                    <td data-testid="eval-row-model"><code>{x.model}</code></td>
                    <td className="nowrap" data-testid="eval-row-machine">{x.machine_name}</td>
                    <td className="nowrap" data-testid="eval-row-progress">{progressText(x.progress)}</td>
                    <td className="nowrap" data-testid="eval-row-score" title={score?.label}>{score ? <>{score.text} <span className="muted">{score.label}</span></> : "–"}</td>
                    <td className="nowrap" data-testid="eval-row-created">{timeText(x.created_at)}</td>
                    <td className="nowrap" data-testid="eval-row-ended">{timeText(x.ended_at)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </>
      ) : null}
    </div>
  );
}
