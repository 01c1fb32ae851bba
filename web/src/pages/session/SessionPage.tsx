// The Session page (`/sessions/:id`, `?resume=<saved snapshot id>` to begin there): the live
// picture over the session's stream, Play / Pause / Step / Random agent at the control rate,
// the controls chosen from the action space with the key map on screen, the live panel,
// snapshots, Close; a crashed session shows its log tail instead of the picture. A session the
// web app opened closes when the page goes away unless "keep running" is on (usePageLifetime.ts).
//
// data-testid: session-page, session-env, session-state, session-error, play, pause, step,
// random-agent, reset, auto-reset, command-progress (CommandProgress.tsx: a slow step's time), keep-running (usePageLifetime.ts), keep-error, close-session, episode-end, episode-outcome (success, or the
// environment's outcome: episodeOutcome.ts), play-error, recording-link;
// Picture.tsx: frame, no-frame, crashed, crash-reason, log-tail; LivePanel.tsx: live, step-count, reward,
// episode-return, seed, origin, fps, last-action, info, observation, obs-<label>;
// ControlsPanel.tsx: controls, key-map, key-<action>, slider-<i>, slider-value-<i>,
// level-<dim>-<value>, toggle-<i>, no-controls; SnapshotsPanel.tsx: snapshots, snapshot-take,
// snapshot-list, snapshot-<n>, snapshot-restore-<n>, snapshot-label, snapshot-save,
// snapshot-error, saved-snapshots, saved-snapshot-<id>, resume-<id>; WorldChangesPanel.tsx:
// world-changes, world-change-<i>, world-change-status-<i>; TracePanel.tsx: trace-view, trace-show,
// trace-refresh, trace-row, ... (the session's recent steps as a trace waterfall).
import { useEffect, useState } from "react";
import { Link, useParams, useSearchParams } from "react-router-dom";
import { CommandProgress } from "./CommandProgress";
import { ControlsPanel } from "./ControlsPanel";
import { LivePanel } from "./LivePanel";
import { Picture } from "./Picture";
import { episodeOutcome } from "./episodeOutcome";
import { type SessionInfo, useSessionInfo } from "./sessionInfo";
import { SnapshotsPanel } from "./SnapshotsPanel";
import { TracePanel } from "./TracePanel";
import { usePageLifetime } from "./usePageLifetime";
import { usePlay } from "./usePlay";
import { StreamFullNotice, useStreamFullSince } from "./StreamFullNotice";
import { WorldChangesPanel } from "./WorldChangesPanel";
import "./session.css";

export function SessionPage() {
  const { sessionId = "" } = useParams();
  const [params] = useSearchParams();
  const loaded = useSessionInfo(sessionId);
  if (loaded.state === "loading") return <section className="session-page"><p className="muted">Loading session {sessionId}…</p></section>;
  if (loaded.state === "error") {
    return (
      <section className="session-page" data-testid="session-page">
        <h1>Session {sessionId}</h1>
        <p className="error" role="alert" data-testid="session-error">{loaded.message}</p>
        <p><Link to="/">Back to the environments</Link></p>
      </section>
    );
  }
  const { session } = loaded;
  if (session.state === "crashed" || session.state === "closed") return <EndedSession session={session} />;
  return <LiveSession key={session.id} session={session} resumeFrom={params.get("resume")} />;
}

function EndedSession({ session }: { session: SessionInfo }) {
  return (
    <section className="session-page" data-testid="session-page">
      <SessionHeader session={session} state={session.state} />
      {session.state === "crashed" ? (
        <div className="picture crashed" data-testid="crashed" role="alert">
          <h2>The environment crashed</h2>
          {session.reason ? <p>{session.reason}</p> : null}
          <pre className="log-tail" data-testid="log-tail" tabIndex={0}>{session.log_tail || "(no log lines)"}</pre>
        </div>
      ) : (
        <p data-testid="session-closed">This session is closed{session.reason ? `: ${session.reason}` : ""}.</p>
      )}
      <p><Link to="/">Start another session</Link></p>
      <TracePanel sessionId={session.id} />
    </section>
  );
}

function SessionHeader({ session, state, onClose }: { session: SessionInfo; state: string; onClose?: () => void }) {
  return (
    <header className="session-header">
      <h1><span data-testid="session-env">{session.env_id}</span> <span className="muted session-id">{session.id}</span></h1>
      <span className={`state state-${state}`} data-testid="session-state">{state}</span>
      {session.record ? (
        <Link data-testid="recording-link" to={`/recordings?session_id=${encodeURIComponent(session.id)}`}>Recording</Link>
      ) : null}
      {onClose ? <button type="button" data-testid="close-session" onClick={onClose}>Close session</button> : null}
    </header>
  );
}

function EpisodeEnd({ ended, steps, info, onReset }: { ended: string; steps: number; info: unknown; onReset: () => void }) {
  const outcome = episodeOutcome(info);
  const tone = outcome.success === true ? " success" : outcome.success === false ? " failure" : "";
  return (
    <p className={`episode-end${tone}`} role="status">
      {outcome.success === true ? <strong className="episode-success">Success!</strong> : null}
      Episode over: <strong data-testid="episode-end">{ended}</strong>
      {outcome.words ? <> (<span data-testid="episode-outcome">{outcome.words}</span>)</> : null} after {steps} steps.
      <button type="button" className="primary" onClick={onReset}>Reset (new seed)</button>
    </p>
  );
}

function LiveSession({ session, resumeFrom: asked }: { session: SessionInfo; resumeFrom: string | null }) {
  const [resumeFrom] = useState(asked); // as the page opened: the URL loses it once resumed
  const play = usePlay(session, resumeFrom);
  const lifetime = usePageLifetime(session, play.phase === "closed" || play.phase === "crashed");
  const streamFullSince = useStreamFullSince(session.id, session.stream_full_since,
    play.phase !== "closed" && play.phase !== "crashed");
  const [, setParams] = useSearchParams();
  const ready = play.phase === "ready";
  const ended = play.view.ended;

  useEffect(() => {
    // Resumed once: a reload should not go back to the snapshot.
    if (resumeFrom && ready) setParams({}, { replace: true });
  }, [ready, resumeFrom, setParams]);

  const state = play.phase === "ready" ? (play.mode === "paused" ? "paused" : play.mode) : play.phase;
  return (
    <section className="session-page" data-testid="session-page">
      <SessionHeader session={session} state={state} onClose={play.phase === "closed" || play.phase === "crashed" ? undefined : () => void play.closeSession()} />
      {play.phase === "crashed" ? <p><Link to={`/?q=${encodeURIComponent(session.env_id)}`}>Start another {session.env_id} session</Link></p> : null}
      {play.phase === "closed" ? (
        <p data-testid="session-closed">
          This session is closed{play.closedReason ? `: ${play.closedReason}` : ""}. <Link to="/">Start another</Link>.
        </p>
      ) : null}
      <div className="session-layout">
        <div className="session-main">
          <Picture play={play} envId={session.env_id} />
          <div className="toolbar" role="toolbar" aria-label="Play">
            <button type="button" className="primary" data-testid="play" disabled={!ready || !!ended || play.mode === "playing"}
              onClick={() => play.play("playing")}>Play</button>
            <button type="button" data-testid="pause" disabled={!ready || play.mode === "paused"} onClick={play.pause}>Pause</button>
            <button type="button" data-testid="step" disabled={!ready || !!ended || play.mode !== "paused" || play.stepping} onClick={play.step}>Step</button>
            <button type="button" data-testid="random-agent" disabled={!ready || !!ended || play.mode === "random" || !play.actionSpace}
              onClick={() => play.play("random")}>Random agent</button>
            <button type="button" data-testid="reset" disabled={!ready} onClick={play.reset}>Reset</button>
            <label className="checkbox">
              <input type="checkbox" data-testid="auto-reset" checked={play.autoReset} onChange={(e) => play.setAutoReset(e.target.checked)} />
              auto reset
            </label>
            {lifetime.closesWithPage ? (
              <label className="checkbox" title="Without it the session closes when you leave this page (a minute after at most)">
                <input type="checkbox" data-testid="keep-running" checked={lifetime.keep} onChange={(e) => lifetime.setKeep(e.target.checked)} />
                keep running after I leave
              </label>
            ) : null}
            <CommandProgress pending={play.pending} />
          </div>
          <StreamFullNotice since={streamFullSince} />
          {ended ? <EpisodeEnd ended={ended} steps={play.view.step} info={play.view.info} onReset={play.reset} /> : null}
          {lifetime.keepError ? <p className="error" role="alert" data-testid="keep-error">{lifetime.keepError}</p> : null}
          {play.error ? (
            <p className="error" role="alert" data-testid="play-error">
              {play.error} <button type="button" onClick={play.dismissError}>Dismiss</button>
            </p>
          ) : null}
          <ControlsPanel play={play} />
        </div>
        <aside className="session-side">
          <LivePanel play={play} />
          {/* only a session made with a timeline has world changes to list (asking for a closed
              session's would be a 410, which the browser logs) */}
          {Array.isArray((session.kwargs as Record<string, unknown> | undefined)?.world_changes) ? (
            <WorldChangesPanel play={play} sessionId={session.id} />
          ) : null}
          <SnapshotsPanel play={play} session={session} />
        </aside>
      </div>
      <TracePanel sessionId={session.id} />
    </section>
  );
}
