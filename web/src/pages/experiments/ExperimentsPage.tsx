// The Experiments page (/experiments): the team's experiments, newest first, each with its
// status in colour (a queued one with its place on its machine's queue), machine, command and,
// below it, its code (the repository, or the folder uploaded), GPUs, when it started and ended (UTC) and its
// exit code; a row opens the experiment's page. While one is active (queued too) the list is
// read again every 3 s.
// data-testid: experiments-page, experiments-new, experiments-list, experiment-row
// (data-experiment-id), experiment-row-status, experiment-row-machine, experiment-row-command,
// experiment-row-source (data-kind: repository or folder),
// experiment-row-gpus, experiment-row-started, experiment-row-ended, experiment-row-exit-code,
// experiments-empty, experiments-error, experiments-retry.
import { useCallback, useEffect, useState } from "react";
import { Link } from "react-router-dom";
import { type Experiment, experiments } from "../../api/experiments";
import { errorText } from "../../lib/errors";
import { exitCodeText, gpusText, refreshMs, sourceView, statusLabel, statusView, timeText } from "../../lib/experiments/status";
import "./experiments.css";

export function ExperimentsPage() {
  const [list, setList] = useState<Experiment[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  const load = useCallback(async () => {
    setError(null);
    try {
      setList(newestFirst(await experiments.list()));
    } catch (e) {
      setError(errorText(e));
    }
  }, []);
  useEffect(() => { void load(); }, [load]);

  const every = refreshMs(list);
  useEffect(() => {
    if (every === null) return undefined;
    const timer = window.setInterval(() => {
      experiments.list().then((found) => setList(newestFirst(found)), () => undefined);  // tried again on the next tick
    }, every);
    return () => window.clearInterval(timer);
  }, [every]);

  return (
    <div className="experiments-page" data-testid="experiments-page">
      <header className="experiments-head">
        <div>
          <h1>Experiments</h1>
          <p className="muted">Commands run on your team's <Link to="/machines">machines</Link>, detached, with their live logs.</p>
        </div>
        <Link to="/experiments/new" className="experiments-new-link" data-testid="experiments-new">New experiment</Link>
      </header>
      {error ? (
        <div role="alert" data-testid="experiments-error">
          <p className="error">The experiments could not be listed: {error}</p>
          <button type="button" data-testid="experiments-retry" onClick={() => void load()}>Try again</button>
        </div>
      ) : null}
      {list === null && !error ? <p className="muted">Loading…</p> : null}
      {list !== null && list.length === 0 ? (
        <p className="experiments-empty" data-testid="experiments-empty">
          No experiment yet. <Link to="/experiments/new">Start one</Link> on a ready machine: a repository or a folder of code, a command, and the
          GPUs it gets.
        </p>
      ) : null}
      {list?.length ? (
        <table className="experiments-table" data-testid="experiments-list">
          <caption className="sr-only">Your team's experiments, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Status</th><th scope="col">Machine</th><th scope="col">Command <span className="muted">and its code</span></th><th scope="col">GPUs</th>
              <th scope="col">Started (UTC)</th><th scope="col">Ended (UTC)</th><th scope="col">Exit code</th>
            </tr>
          </thead>
          <tbody>
            {list.map((x) => {
              const status = statusView(x.status);
              const code = sourceView(x);
              return (
                <tr key={x.id} data-testid="experiment-row" data-experiment-id={x.id}>
                  <td><span className={`experiment-status tone-${status.tone}`} data-testid="experiment-row-status">{statusLabel(x)}</span></td>
                  <td className="nowrap" data-testid="experiment-row-machine">{x.machine_name}</td>
                  <td className="experiment-command-cell">
                    <Link to={`/experiments/${encodeURIComponent(x.id)}`} title={x.command} data-testid="experiment-row-command">
                      <code>{x.command}</code>
                    </Link>
                    <span className="experiment-row-source muted" data-testid="experiment-row-source" data-kind={code.kind} title={code.where}>
                      {code.kind === "folder" ? "folder " : null}<code>{code.where}</code>{code.ref ? <> at <code>{code.ref}</code></> : null}
                    </span>
                  </td>
                  <td className="num" data-testid="experiment-row-gpus">{gpusText(x)}</td>
                  <td className="nowrap" data-testid="experiment-row-started">{timeText(x.started_at)}</td>
                  <td className="nowrap" data-testid="experiment-row-ended">{timeText(x.ended_at)}</td>
                  <td className="num" data-testid="experiment-row-exit-code">{x.ended_at ? exitCodeText(x) : "–"}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : null}
    </div>
  );
}

function newestFirst(found: Experiment[]): Experiment[] {
  return [...found].sort((a, b) => b.created_at - a.created_at);
}
