// The experiment's log: the text as it comes, in a box that follows the newest line while the
// reader is at its bottom and stops when they scroll up (Follow the log takes them back down),
// and a line saying whether it is followed live, reconnecting after a drop, or whole (a queued
// experiment's says its log begins when it starts; one that ended before it started says so).
// data-testid: experiment-log, experiment-log-state (data-phase), experiment-log-follow,
// experiment-log-dropped, experiment-log-empty.
import { useLayoutEffect, useRef, useState } from "react";
import { isAtBottom } from "../../lib/experiments/autoScroll";
import { type FollowState, followText } from "../../lib/experiments/logFollower";
import type { LogText } from "../../lib/experiments/logText";

interface Props {
  log: LogText;
  state: FollowState;
  /** Still queued: nothing is written before it starts. */
  queued?: boolean;
  /** It ended without starting (cancelled while queued). */
  neverStarted?: boolean;
}

export function ExperimentLog({ log, state, queued = false, neverStarted = false }: Props) {
  const box = useRef<HTMLPreElement>(null);
  const [following, setFollowing] = useState(true);

  useLayoutEffect(() => {
    const element = box.current;
    if (element && following) element.scrollTop = element.scrollHeight;
  }, [log, following]);

  const follow = () => {
    setFollowing(true);
    const element = box.current;
    if (element) element.scrollTop = element.scrollHeight;
  };
  const phase = state.phase;
  return (
    <section className="experiments-panel experiment-log-panel" aria-labelledby="experiment-log-title">
      <div className="experiment-log-head">
        <h2 id="experiment-log-title">Log</h2>
        <span className={`experiment-log-state phase-${phase}`} role="status" data-testid="experiment-log-state" data-phase={phase}>
          {followText(state)}
        </span>
        {!following ? (
          <button type="button" className="experiment-log-follow" data-testid="experiment-log-follow" onClick={follow}>
            Follow the log ↓
          </button>
        ) : null}
      </div>
      {log.dropped ? (
        <p className="muted" data-testid="experiment-log-dropped">
          The first {log.dropped.toLocaleString("en")} characters are not shown here (the page keeps the end of a long log);
          the platform holds all of it: <code>GET /v0/experiments/…/logs?offset=0</code>.
        </p>
      ) : null}
      <pre ref={box} className="experiment-log" data-testid="experiment-log" tabIndex={0} aria-label="The experiment's log"
        onScroll={(e) => setFollowing(isAtBottom(e.currentTarget))}>
        {log.text}
      </pre>
      {!log.text && (phase === "ended" || phase === "following") ? (
        <p className="muted" data-testid="experiment-log-empty">{phase === "ended" ? (neverStarted ? "It never started: nothing was written." : "The command wrote nothing.")
            : queued ? "Queued: its log begins when it starts." : "Nothing written yet."}</p>
      ) : null}
    </section>
  );
}
