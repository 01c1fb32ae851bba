// The Replay page's "Play back" panel: start it, watch its progress and the played frame, and
// read the verdict: a match on every step, or the first divergent step and what differed.
import { divergence } from "../../lib/replay/playBack";
import type { PlayBackState } from "./usePlayBack";

interface Props {
  playBack: PlayBackState;
  onSeek: (step: number) => void;
}

function statusText(p: PlayBackState): string {
  const played = Math.max(0, p.verdicts.length - 1);
  switch (p.phase) {
    case "idle": return "Not played back yet.";
    case "starting": return "Starting a session…";
    case "playing": return `Playing back: step ${played} of ${p.total}…`;
    case "stopped": return `Stopped after ${played} of ${p.total} steps.`;
    case "error": return "Play back failed.";
    case "done":
      if (p.firstDivergent === null && played === p.total) return `Matches the recording on every step (${p.total} steps).`;
      if (p.firstDivergent === null) return `Matched ${played} steps, then the episode ended before the recording's ${p.total}.`;
      return `Diverged from the recording at step ${p.firstDivergent}.`;
  }
}

export function PlayBackPanel({ playBack: p, onSeek }: Props) {
  const running = p.phase === "starting" || p.phase === "playing";
  const matched = p.verdicts.filter((v) => v.match).length;
  const diverged = p.verdicts.length - matched;
  const first = p.firstDivergent === null ? null : p.verdicts.find((v) => v.step === p.firstDivergent) ?? null;
  const statusClass = p.phase === "done" ? (p.firstDivergent === null ? "status-match" : "status-diverged") : "";
  return (
    <section className="play-back" aria-label="Play back">
      <h2>Play back</h2>
      <p className="muted">
        Plays this episode's recorded actions in a new session of the same environment, reset with the recorded
        seed ({p.seed === null || p.seed === undefined ? "none was recorded" : String(p.seed)}), and checks each
        observation and reward against the recording.
      </p>
      {p.blocker ? (
        <p className="muted" data-testid="play-back-blocked">Play back is not possible: {p.blocker}.</p>
      ) : running ? (
        <button type="button" data-testid="play-back-stop" onClick={p.stop}>Stop play back</button>
      ) : (
        <button type="button" className="primary" data-testid="play-back" onClick={p.start}>
          {p.phase === "idle" ? "Play back" : "Play back again"}
        </button>
      )}
      <p data-testid="play-back-status" data-phase={p.phase} data-session-id={p.sessionId ?? undefined} className={statusClass} role="status">{statusText(p)}</p>
      {p.verdicts.length > 0 && (
        <p className="muted" data-testid="play-back-progress" data-matched={matched} data-diverged={diverged} data-played={p.verdicts.length - 1}>
          {matched} of {p.verdicts.length} checks match (the reset and {p.verdicts.length - 1} steps){diverged > 0 ? `, ${diverged} diverged` : ""}.
        </p>
      )}
      {first && (
        <p>
          First divergent step:{" "}
          <button type="button" className="link-button" data-testid="first-divergent-step" data-step={first.step}
            onClick={() => onSeek(first.step)}>{first.step}</button>
          {" "}— {divergence(first)}
        </p>
      )}
      {p.error && <p className="error" role="alert" data-testid="play-back-error">{p.error}</p>}
      {p.frameUrl && <img className="play-back-frame" data-testid="play-back-frame" src={p.frameUrl} alt="the played back session's latest frame" />}
    </section>
  );
}
