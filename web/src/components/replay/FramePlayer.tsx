// The frame player: the frame at the cursor, play/pause, frame by frame, a scrubber over the
// episode's steps with its timeline marks, and the speed. Keyboard (handled by the page):
// ←/→ one step, Space play/pause. A step without a frame of its own shows the nearest one, and
// says so (a thinned life's unkept frame; the first step of an episode that began from a restore,
// which records no frame).
import type { FrameChoice } from "../../lib/replay/frames";
import { SPEEDS } from "../../lib/replay/playerClock";
import { TimelineMarks, type TimelineMark } from "./TimelineMarks";
import type { ShownFrame } from "./useFrames";

interface Props {
  shown: ShownFrame | null;
  wanted: FrameChoice | null;
  frameError: string | null;
  hasFrames: boolean;
  /** The server had a frame for none of the rows asked for. */
  noneFound: boolean;
  /** The cursor step's own frame is missing on the server (not merely thinned out). */
  ownMissing: boolean;
  /** The episode began from a snapshot restore (meta.json `start: "restore"`). */
  restoreStart: boolean;
  step: number;
  first: number;
  last: number;
  playing: boolean;
  speed: number;
  marks: readonly TimelineMark[];
  onStep: (step: number) => void;
  onPlaying: (playing: boolean) => void;
  onSpeed: (speed: number) => void;
}

export function FramePlayer(props: Props) {
  const { shown, wanted, hasFrames, step, first, last, playing, speed, marks, onStep, onPlaying, onSpeed } = props;
  const { noneFound, ownMissing, restoreStart } = props;
  const loading = wanted !== null && (shown === null || shown.row !== wanted.row);
  const why = restoreStart && step === first ? " (the episode began from a snapshot restore, which records no frame)" : "";
  return (
    <div className="frame-player">
      <div className={`frame-box${loading ? " loading" : ""}`}>
        {noneFound ? (
          <p className="muted frame-none" data-testid="no-frames">
            None of this episode's frames could be found on the server{restoreStart ? " (it began from a snapshot restore)" : ""}; its data is plotted below.
          </p>
        ) : !hasFrames ? (
          <p className="muted frame-none" data-testid="no-frames">
            This episode kept no frames (record with frames to see them); its data is plotted below.
          </p>
        ) : shown ? (
          <img data-testid="replay-frame" src={shown.url} alt={`frame of step ${shown.step}`}
            data-frame-row={shown.row} data-frame-step={shown.step} data-loading={loading ? "true" : "false"} />
        ) : (
          <p className="muted frame-none">Loading frame…</p>
        )}
      </div>
      {hasFrames && wanted && !wanted.exact && !playing && (
        <p className="muted frame-note" data-testid="frame-note">
          {ownMissing
            ? <>No frame was recorded at step {step}{why}: showing the nearest one, step {wanted.step}.</>
            : <>No frame kept at step {step}: showing the nearest kept one, step {wanted.step}.</>}
        </p>
      )}
      {props.frameError && <p className="error" data-testid="frame-error">{props.frameError}</p>}
      <div className="scrubber-row">
        <input type="range" className="scrubber" data-testid="scrubber" aria-label="Step" min={first} max={last} step={1}
          value={step} onChange={(e) => onStep(Number(e.target.value))} />
        <TimelineMarks marks={marks} first={first} last={last} onSeek={onStep} />
      </div>
      <div className="player-controls" role="toolbar" aria-label="Player">
        <button type="button" data-testid="step-back" onClick={() => onStep(step - 1)} disabled={step <= first}
          aria-label="One step back (←)" title="One step back (←)">◀︎ step</button>
        <button type="button" data-testid="play" className="primary" onClick={() => onPlaying(!playing)}
          aria-label={playing ? "Pause (Space)" : "Play (Space)"} title={playing ? "Pause (Space)" : "Play (Space)"}>
          {playing ? "❚❚ Pause" : "▶ Play"}
        </button>
        <button type="button" data-testid="step-forward" onClick={() => onStep(step + 1)} disabled={step >= last}
          aria-label="One step forward (→)" title="One step forward (→)">step ▶︎</button>
        <label className="speed">
          Speed
          <select data-testid="speed" value={speed} onChange={(e) => onSpeed(Number(e.target.value))}>
            {SPEEDS.map((s) => <option key={s} value={s}>{s}×</option>)}
          </select>
        </label>
        <span className="muted keys">←/→ step · Space play/pause</span>
      </div>
    </div>
  );
}
