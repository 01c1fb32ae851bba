// The agents' replays of the same moment, side by side: for a chosen seed, every agent's recorded
// frame at one shared cursor (a session step: the agents' first step is the comparison's
// first_step), with one slider, step buttons, play/pause and speed for all of them. The cursor
// is the page's, shared with the reward chart (a click on the chart moves it; the chart marks it).
//
// data-testids: side-by-side, side-seed (select, with several seeds), side-cursor (range input),
// side-step (the session step, data-step), side-back, side-forward, side-play, side-speed, and
// each agent's lane (ReplayLane.tsx).
import { useCallback, useMemo, useRef, useState } from "react";
import type { Comparison } from "../../lib/comparisons/measures";
import { actionAt } from "../../lib/comparisons/runTimeline";
import { clampCursor, cursorRange, lanesFor, overlaySeeds } from "../../lib/comparisons/sideBySide";
import { DEFAULT_RATE, SPEEDS } from "../../lib/replay/playerClock";
import { ReplayLane } from "./ReplayLane";
import { usePlayClock } from "./usePlayClock";

interface Props {
  comparison: Comparison;
  /** The page's cursor (a session step), null before any was chosen. */
  cursor: number | null;
  onCursor: (step: number) => void;
}

function laneKey(seed: number | null, name: string): string {
  return `${String(seed)}/${name}`;
}

interface Recorded {
  actions: number;
  rate: number;
}

export function SideBySidePanel({ comparison, cursor, onCursor }: Props) {
  const seeds = useMemo(() => overlaySeeds(comparison), [comparison]);
  const [seed, setSeed] = useState<number | null>(seeds[0]);
  const lanes = useMemo(() => lanesFor(comparison, seed), [comparison, seed]);
  const [recorded, setRecorded] = useState<Record<string, Recorded>>({});
  const [playing, setPlaying] = useState(false);
  const [speed, setSpeed] = useState(1);

  // What each lane of this seed found in its recording (keyed by seed and agent).
  const found = useMemo(() => lanes.map((l) => recorded[laneKey(seed, l.name)]).filter((r) => r !== undefined),
    [lanes, recorded, seed]);
  const range = useMemo(() => cursorRange(comparison, lanes, found.map((r) => r.actions)), [comparison, lanes, found]);
  const step = clampCursor(range, cursor ?? range.first);
  const stepRef = useRef(step);
  stepRef.current = step;
  const rate = found[0]?.rate ?? DEFAULT_RATE;

  const onRecorded = useCallback((name: string, actions: number, laneRate: number) => {
    const key = laneKey(seed, name);
    setRecorded((old) => (old[key]?.actions === actions && old[key]?.rate === laneRate
      ? old : { ...old, [key]: { actions, rate: laneRate } }));
  }, [seed]);

  const seek = useCallback((next: number) => {
    setPlaying(false);
    onCursor(clampCursor(range, next));
  }, [onCursor, range]);
  const stop = useCallback(() => setPlaying(false), []);
  usePlayClock({ playing, rate, speed, first: range.first, last: range.last, cursor: stepRef, onCursor, onStopped: stop });

  const recordedLanes = lanes.filter((l) => l.recordingId !== null).length;
  return (
    <section className="side-by-side" data-testid="side-by-side" aria-labelledby="side-by-side-title">
      <h2 id="side-by-side-title">Side by side</h2>
      <p className="muted">
        Every agent at the same session step, each from its own recording
        {seeds.length > 1 ? " of the chosen seed's run" : ""}; a click on the reward chart moves the cursor there.
        {recordedLanes === 0 ? " No agent's run was recorded for this seed." : ""}
      </p>
      <div className="side-controls" role="toolbar" aria-label="Side-by-side player">
        {seeds.length > 1 && (
          <label>
            Seed{" "}
            <select data-testid="side-seed" value={String(seed)} onChange={(e) => { setPlaying(false); setSeed(Number(e.target.value)); }}>
              {seeds.map((s) => <option key={String(s)} value={String(s)}>{s}</option>)}
            </select>
          </label>
        )}
        <button type="button" data-testid="side-back" onClick={() => seek(step - 1)} disabled={step <= range.first}
          aria-label="One step back">◀︎ step</button>
        <button type="button" className="primary" data-testid="side-play" onClick={() => setPlaying((p) => !p)}>
          {playing ? "❚❚ Pause" : "▶ Play"}
        </button>
        <button type="button" data-testid="side-forward" onClick={() => seek(step + 1)} disabled={step >= range.last}
          aria-label="One step forward">step ▶︎</button>
        <label>
          Speed{" "}
          <select data-testid="side-speed" value={speed} onChange={(e) => setSpeed(Number(e.target.value))}>
            {SPEEDS.map((s) => <option key={s} value={s}>{s}×</option>)}
          </select>
        </label>
        <span data-testid="side-step" data-step={step}>
          session step <b>{step}</b> <span className="muted">(each agent&apos;s step {actionAt(step, range.first)})</span>
        </span>
      </div>
      <input type="range" className="side-cursor" data-testid="side-cursor" aria-label="Session step"
        min={range.first} max={range.last} step={1} value={step} onChange={(e) => seek(Number(e.target.value))} />
      <div className="side-lanes">
        {lanes.map((lane) => (
          <ReplayLane key={laneKey(seed, lane.name)} lane={lane} action={actionAt(step, range.first)}
            playing={playing} stepsPerSecond={rate * speed} onRecorded={onRecorded} />
        ))}
      </div>
    </section>
  );
}
