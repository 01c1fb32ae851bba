// One experiment (/experiments/:experimentId): its status in colour with the reason ("Queued
// (position 1)" and what it waits for while queued), exit code, machine, command, its code (the
// repository and ref, or the folder uploaded), GPUs (indices and UUIDs: its CUDA_VISIBLE_DEVICES;
// whether it shares them), the names of the variables given, its API token's id, its times, and
// the live log (ExperimentLog, useLogFollower). Cancel, while it is active (queued too), asks
// first. The experiment is read again when a piece of log brings another status or the end, and
// every 3 s while it is active, so a queued one's page follows it to Starting and Running.
// data-testid: experiment-page, experiment-id, experiment-status, experiment-reason,
// experiment-exit-code, experiment-machine, experiment-command, experiment-repository or
// experiment-folder, experiment-gpus, experiment-gpu-uuids, experiment-env-names, experiment-token-id,
// experiment-created, experiment-started, experiment-ended, experiment-duration,
// experiment-run-dir, experiment-cancel, experiment-cancel-dialog(-confirm, -cancel, -error),
// experiment-error, experiment-not-found; ExperimentLog's; RayCluster's (an experiment on a Ray cluster).
import { useCallback, useEffect, useRef, useState } from "react";
import { Link, useParams } from "react-router-dom";
import type { ApiError } from "../../api/client";
import { type Experiment, type ExperimentStatus, experiments } from "../../api/experiments";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { errorText } from "../../lib/errors";
import {
  ACTIVE_REFRESH_MS, durationText, exitCodeText, gpusText, isActive, sourceView, statusLabel, statusView, timeText, waitedText,
} from "../../lib/experiments/status";
import { useNow } from "../machines/useElapsed";
import { ExperimentLog } from "./ExperimentLog";
import { ExperimentRuns } from "./ExperimentRuns";
import { RayCluster } from "./RayCluster";
import { useLogFollower } from "./useLogFollower";
import "./experiments.css";

export function ExperimentPage() {
  const { experimentId = "" } = useParams();
  const [experiment, setExperiment] = useState<Experiment | null>(null);
  const [error, setError] = useState<{ text: string; missing: boolean } | null>(null);
  const [asking, setAsking] = useState(false);
  const [cancelling, setCancelling] = useState(false);
  const [cancelError, setCancelError] = useState<string | null>(null);
  const now = useNow(1000);

  const load = useCallback(async () => {
    try {
      setExperiment(await experiments.get(experimentId));
      setError(null);
    } catch (e) {
      setError({ text: errorText(e), missing: (e as Partial<ApiError>)?.status === 404 });
    }
  }, [experimentId]);
  useEffect(() => {
    setExperiment(null);
    void load();
  }, [load]);

  const shown = useRef<Experiment | null>(null);
  shown.current = experiment;
  const onStatus = useCallback((status: ExperimentStatus, ended: boolean) => {
    const known = shown.current;
    if (known && (known.status !== status || (ended && !known.ended_at))) void load();
  }, [load]);
  const { log, state } = useLogFollower(experimentId, onStatus);

  const active = experiment !== null && isActive(experiment.status);
  useEffect(() => {
    if (!active) return undefined;
    const timer = window.setInterval(() => void load(), ACTIVE_REFRESH_MS);
    return () => window.clearInterval(timer);
  }, [active, load]);

  async function cancel() {
    setCancelling(true);
    setCancelError(null);
    try {
      setExperiment(await experiments.cancel(experimentId));
      setAsking(false);
    } catch (e) {
      setCancelError(errorText(e));
    } finally {
      setCancelling(false);
    }
  }

  if (error?.missing) {
    return (
      <div className="experiments-page" data-testid="experiment-page">
        <p className="error" role="alert" data-testid="experiment-not-found">{error.text}</p>
        <p><Link to="/experiments">All experiments</Link></p>
      </div>
    );
  }
  const status = experiment ? statusView(experiment.status) : null;
  const queued = experiment?.status === "queued";
  const code = experiment ? sourceView(experiment) : null;
  return (
    <div className="experiments-page" data-testid="experiment-page">
      <header className="experiments-head">
        <div>
          <p className="muted"><Link to="/experiments">Experiments</Link> /</p>
          <h1>Experiment <code data-testid="experiment-id">{experimentId}</code></h1>
        </div>
        {experiment && status ? <span className={`experiment-status big tone-${status.tone}`} data-testid="experiment-status">{statusLabel(experiment)}</span> : null}
      </header>
      {error ? <p className="error" role="alert" data-testid="experiment-error">{error.text}</p> : null}
      {experiment === null && !error ? <p className="muted">Loading…</p> : null}
      {experiment ? (
        <section className="experiments-panel">
          {experiment.status_reason ? (
            <p className={status?.tone === "bad" ? "error" : "experiment-reason"} data-testid="experiment-reason">{experiment.status_reason}</p>
          ) : null}
          <dl className="experiment-facts">
            <dt>Exit code</dt><dd data-testid="experiment-exit-code">{exitCodeText(experiment)}</dd>
            <dt>Machine</dt><dd data-testid="experiment-machine"><Link to="/machines">{experiment.machine_name}</Link> <span className="muted">({experiment.machine_id})</span></dd>
            <dt>Command</dt><dd><pre className="experiment-command" data-testid="experiment-command">{experiment.command}</pre></dd>
            {code?.kind === "folder" ? <>
              <dt>Folder</dt>
              <dd data-testid="experiment-folder"><code>{code.where}</code> <span className="muted">(of the platform's host, uploaded)</span></dd>
            </> : <>
              <dt>Repository</dt>
              <dd data-testid="experiment-repository"><code>{code?.where}</code>{code?.ref ? <> at <code>{code.ref}</code></> : <span className="muted"> (its default branch)</span>}</dd>
            </>}
            <dt>GPUs</dt>
            <dd>
              <span data-testid="experiment-gpus">{gpusText(experiment)}</span>
              {experiment.gpu_uuids.length ? (
                <span className="muted" data-testid="experiment-gpu-uuids"> (CUDA_VISIBLE_DEVICES=<code>{experiment.gpu_uuids.join(",")}</code>)</span>
              ) : null}
            </dd>
            <dt>Environment</dt>
            <dd data-testid="experiment-env-names">{experiment.env_names.length ? <code>{[...experiment.env_names].sort().join(" ")}</code> : <span className="muted">none given</span>}</dd>
            <dt>API token</dt>
            <dd data-testid="experiment-token-id">{experiment.token_id ? <><code>{experiment.token_id}</code> <span className="muted">(its PLATFORM_TOKEN; revoked when it ends)</span></> : <span className="muted">none (the platform runs without API tokens)</span>}</dd>
            <dt>Created</dt><dd data-testid="experiment-created">{timeText(experiment.created_at)} UTC</dd>
            <dt>Started</dt><dd data-testid="experiment-started">{experiment.started_at ? `${timeText(experiment.started_at)} UTC` : "not yet"}</dd>
            <dt>Ended</dt><dd data-testid="experiment-ended">{experiment.ended_at ? `${timeText(experiment.ended_at)} UTC` : "not yet"}</dd>
            {queued ? <><dt>Waiting for</dt><dd data-testid="experiment-duration">{waitedText(experiment, now)}</dd></>
              : <><dt>{experiment.ended_at ? "Ran for" : "Running for"}</dt><dd data-testid="experiment-duration">{durationText(experiment, now)}</dd></>}
            <dt>On the machine</dt><dd data-testid="experiment-run-dir">{experiment.run_dir ? <code>{experiment.run_dir}</code> : <span className="muted">{experiment.ended_at ? "none (it never started)" : "not yet (made when it starts)"}</span>}</dd>
          </dl>
          <RayCluster experiment={experiment} />
          {active ? (
            <div className="experiment-actions">
              <button type="button" className="danger-outline" data-testid="experiment-cancel" disabled={cancelling}
                onClick={() => { setCancelError(null); setAsking(true); }}>Cancel</button>
            </div>
          ) : null}
          {cancelError && !asking ? <p className="error" role="alert">{cancelError}</p> : null}
        </section>
      ) : null}
      <ExperimentRuns experimentId={experimentId} experiment={experiment} />
      <ExperimentLog log={log} state={state} queued={queued} neverStarted={Boolean(experiment?.ended_at && !experiment.started_at)} />
      <ConfirmDialog open={asking} title="Cancel this experiment?" confirmLabel="Cancel the experiment" busyLabel="Cancelling…"
        busy={cancelling} error={asking ? cancelError : null} testId="experiment-cancel-dialog"
        cancelLabel={queued ? "Keep it queued" : "Keep it running"} onConfirm={() => void cancel()} onCancel={() => setAsking(false)}>
        {queued ? (
          <p>
            It has not started: it leaves the queue of <strong>{experiment?.machine_name}</strong> and nothing runs there. The
            ones behind it move up.
          </p>
        ) : (
          <p>
            The platform stops the command on <strong>{experiment?.machine_name}</strong>: TERM to it and every process it
            started, then KILL to what is left a few seconds later. Its log stays here.
          </p>
        )}
      </ConfirmDialog>
    </div>
  );
}
