// The Replay page (`/recordings/:recordingId?episode=3&step=120`): a recorded episode's frames
// with its reward, agent data, info.is_success and whether each action was the teacher's
// suggestion plotted step by step, every observation and action plotted (lib/replay/signals.ts),
// the cursor shared by the frame and every plot, a drag on any plot zooming them all; the frame's
// true values (state.<name>) and the next action beside the teacher's suggestion; its episodes'
// boundaries to pick from (with the episode a recording in progress is recording, marked "in
// progress" and shown as written so far); the recording's world changes listed and marked on the timeline and
// the plots at the step they applied from; and "Play back", which plays the recorded actions in a new session and marks
// each step match or diverged. The URL keeps the episode and step (a deep link).
//
// data-testids:
//   replay-title, replay-error, episode-<n> (a segment of the episode strip), episode-select,
//   replay-in-progress (an episode still being recorded, shown as written so far: data-steps),
//   replay-refresh (load it again), replay-follow (load it again whenever it grew),
//   episode-details, episode-length, episode-return, episode-ending, episode-seed,
//   replay-frame (the <img>, with data-frame-row / data-frame-step / data-loading), no-frames,
//   frame-note (a thinned life's nearest kept frame), frame-error, scrubber (range input),
//   play (play/pause), step-back, step-forward, speed (select),
//   cursor-step, cursor-reward, cursor-return, cursor-success, cursor-ended, cursor-agent-<name>,
//   plot-reward, plot-agent-<name>, plot-is_success, plot-teacher, plot-play-back, and the
//   observation and action charts plot-observation[-<label>|-<i>-<j>], plot-action[-<i>-<j>]
//   (uPlot charts; each legend shows the plotted values at the cursor, rounded; a drag zooms all),
//   plots-zoom (data-min/data-max while zoomed), plots-zoom-reset, signals, signal-picker,
//   signal-toggle-<chart>, signal-all, signal-none, signal-skipped-<array> (ReplayPlots.tsx), world-change-<i> (timeline marks),
//   world-changes (the list) with world-change-item-<i>, divergence-mark; FrameDetails.tsx:
//   frame-details, state-<name>, next-action-step, next-action-taken, teacher-suggestion,
//   teacher-agrees;
//   play-back (button), play-back-stop, play-back-blocked, play-back-status (data-phase: idle,
//   starting, playing, done, stopped, error; data-session-id: the played session),
//   play-back-progress (data-played, data-matched, data-diverged), first-divergent-step
//   (data-step), play-back-error, play-back-frame, plots-load-ms (data-ms: the episode's
//   arrays asked for to plot data ready).
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { Link, useParams, useSearchParams } from "react-router-dom";
import { CursorReadout } from "../../components/replay/CursorReadout";
import { EpisodePicker } from "../../components/replay/EpisodePicker";
import { FrameDetails } from "../../components/replay/FrameDetails";
import { FramePlayer } from "../../components/replay/FramePlayer";
import { ReplayPlots } from "../../components/replay/ReplayPlots";
import type { TimelineMark } from "../../components/replay/TimelineMarks";
import type { ChartMark } from "../../components/replay/UPlotChart";
import { useFrames } from "../../components/replay/useFrames";
import { frameCount, ownFrameMissing } from "../../lib/replay/frames";
import { controlRate, stepsDue } from "../../lib/replay/playerClock";
import { chooseEpisode, parseReplayQuery, stepAskedByLink } from "../../lib/replay/replayQuery";
import { clampStep, firstStep, lastStep } from "../../lib/replay/steps";
import { stepsBeforeEpisode, worldChangeMarks } from "../../lib/worldChanges/replayMarks";
import { PlayBackPanel } from "./PlayBackPanel";
import { type EpisodeData, type RecordingMeta, replayEpisodes, useEpisode, useRecording } from "./replayData";
import { useSignals } from "./signalData";
import { usePlayBack } from "./usePlayBack";
import "./replay.css";

const WORLD_CHANGE_COLOR = "#9b2fae";
const DIVERGENCE_COLOR = "#b3261e";

export function ReplayPage() {
  const { recordingId = "" } = useParams();
  const recording = useRecording(recordingId);
  return (
    <section className="replay-page">
      <p className="breadcrumbs"><Link to="/recordings">Recordings</Link> / <code>{recordingId}</code></p>
      {recording.state === "loading" && <p className="muted">Loading recording…</p>}
      {recording.state === "error" && <p className="error" role="alert" data-testid="replay-error">{recording.message}</p>}
      {recording.state === "ready" && <RecordingReplay meta={recording.value} />}
    </section>
  );
}

function RecordingReplay({ meta }: { meta: RecordingMeta }) {
  const [params, setParams] = useSearchParams();
  const query = useMemo(() => parseReplayQuery(params), [params]);
  const episodes = useMemo(() => replayEpisodes(meta), [meta]);
  const episode = chooseEpisode(query.episode, episodes.map((e) => e.index));
  const entry = episodes.find((e) => e.index === episode);
  // An episode whose arrays could not be built has no file to read (meta.json says why).
  const unreadable = entry !== undefined && entry.file === null;
  const [version, setVersion] = useState(0);
  const data = useEpisode(meta.id, unreadable ? null : episode, meta, version);
  const [follow, setFollow] = useState(true);
  const shownSteps = data.state === "ready" && data.value.inProgress ? data.value.steps.length : null;
  const writtenSteps = meta.openEpisode !== null && meta.openEpisode.index === episode ? meta.openEpisode.length : null;

  // Following an episode in progress: load it again once more of it is written.
  useEffect(() => {
    if (follow && shownSteps !== null && writtenSteps !== null && writtenSteps > shownSteps) setVersion((v) => v + 1);
  }, [follow, shownSteps, writtenSteps]);

  const pick = useCallback((index: number) => {
    setParams({ episode: String(index), step: "0" }, { replace: false });
  }, [setParams]);

  return (
    <>
      <h1 data-testid="replay-title">
        Replay of <code>{meta.id}</code>{meta.envId && <> · {meta.envId}</>}
      </h1>
      {episodes.length === 0 ? (
        <p className="muted" data-testid="replay-error">
          This recording has no episode yet{meta.raw.status === "recording" ? " (it is still recording: its first episode has not started)" : ""}.
        </p>
      ) : (
        <EpisodePicker episodes={episodes} current={episode} onPick={pick} />
      )}
      {shownSteps !== null && (
        <InProgressNote episode={episode ?? 0} shown={shownSteps} written={writtenSteps} follow={follow}
          onFollow={setFollow} onRefresh={() => setVersion((v) => v + 1)} />
      )}
      {unreadable && (
        <p className="error" data-testid="replay-error">
          Episode {episode} could not be written as a file{typeof entry.error === "string" ? `: ${entry.error}` : ""}; its
          events are kept in its .failed.part file.
        </p>
      )}
      {!unreadable && data.state === "loading" && episode !== null && <p className="muted">Loading episode {episode}…</p>}
      {!unreadable && data.state === "error" && <p className="error" role="alert" data-testid="replay-error">{data.message}</p>}
      {!unreadable && data.state === "ready" && data.value.index === episode && (
        <EpisodeReplay key={`${meta.id}-${episode}`} meta={meta} data={data.value} askedStep={query.step} />
      )}
    </>
  );
}

/** The mark of an episode still being recorded: how many of its steps are shown, how many are
 * written by now, and loading it again (by hand, or whenever it grew while following). */
function InProgressNote({ episode, shown, written, follow, onFollow, onRefresh }: {
  episode: number; shown: number; written: number | null; follow: boolean;
  onFollow: (follow: boolean) => void; onRefresh: () => void;
}) {
  return (
    <p className="in-progress-note" data-testid="replay-in-progress" data-steps={shown}>
      <span className="status status-recording">in progress</span>{" "}
      Episode {episode} is still being recorded: showing the {shown.toLocaleString("en-US")} step{shown === 1 ? "" : "s"} written
      so far{written !== null && written > shown ? ` (${written.toLocaleString("en-US")} by now)` : ""}.{" "}
      <button type="button" data-testid="replay-refresh" onClick={onRefresh}>Refresh</button>{" "}
      <label>
        <input type="checkbox" data-testid="replay-follow" checked={follow} onChange={(e) => onFollow(e.target.checked)} />
        {" "}follow as it grows
      </label>
    </p>
  );
}

function EpisodeReplay({ meta, data, askedStep }: { meta: RecordingMeta; data: EpisodeData; askedStep: number | null }) {
  const [, setParams] = useSearchParams();
  const first = firstStep(data.steps);
  const last = lastStep(data.steps);
  const [step, setStepState] = useState(() => clampStep(data.steps, askedStep ?? first));
  const [playing, setPlaying] = useState(false);
  const [speed, setSpeed] = useState(1);
  const rate = useMemo(() => controlRate(meta.raw), [meta.raw]);
  const stepRef = useRef(step);
  stepRef.current = step;
  const writtenStep = useRef<number | null>(null); // the step this page last put in the link

  const setStep = useCallback((next: number) => setStepState(clampStep(data.steps, next)), [data.steps]);

  // The deep link follows the cursor (not on every frame while playing).
  useEffect(() => {
    if (playing) return;
    const timer = window.setTimeout(() => {
      writtenStep.current = step;
      setParams((old) => {
        if (old.get("step") === String(step) && old.get("episode") === String(data.index)) return old;
        const next = new URLSearchParams(old);
        next.set("episode", String(data.index));
        next.set("step", String(step));
        return next;
      }, { replace: true });
    }, 250);
    return () => window.clearTimeout(timer);
  }, [step, playing, data.index, setParams]);

  // Follow a changed ?step= (the browser's back button, an edited link), not the page's own.
  useEffect(() => {
    const asked = stepAskedByLink(askedStep, writtenStep.current, stepRef.current);
    if (asked !== null) setStepState(clampStep(data.steps, asked));
    // only when the link changes
  }, [askedStep, data.steps]);

  // Play at the control rate times the speed; stop at the episode's end.
  useEffect(() => {
    if (!playing) return;
    if (stepRef.current >= last) setStepState(first);
    let carry = 0;
    let before = performance.now();
    let handle = requestAnimationFrame(function tick(now) {
      const due = stepsDue(carry, now - before, rate, speed);
      carry = due.carry;
      before = now;
      if (due.steps > 0) {
        const next = Math.min(last, stepRef.current + due.steps);
        setStepState(next);
        if (next >= last) {
          setPlaying(false);
          return;
        }
      }
      handle = requestAnimationFrame(tick);
    });
    return () => cancelAnimationFrame(handle);
  }, [playing, rate, speed, first, last]);

  // Keyboard: ←/→ step, Space play/pause (not while typing, nor on the scrubber's own arrows).
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.altKey || e.ctrlKey || e.metaKey) return;
      const target = e.target as HTMLElement | null;
      const tag = target?.tagName;
      if (tag === "TEXTAREA" || tag === "SELECT" || (tag === "INPUT" && (target as HTMLInputElement).type !== "range")) return;
      if (target?.closest("dialog")) return;
      const onScrubber = tag === "INPUT";
      if (e.key === "ArrowRight" && !onScrubber) {
        e.preventDefault();
        setPlaying(false);
        setStep(stepRef.current + 1);
      } else if (e.key === "ArrowLeft" && !onScrubber) {
        e.preventDefault();
        setPlaying(false);
        setStep(stepRef.current - 1);
      } else if (e.key === " " || e.code === "Space") {
        e.preventDefault();
        setPlaying((p) => !p);
      }
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [setStep]);

  const frames = useFrames({
    recordingId: meta.id, episode: data.index, source: data.frames, step, playing, stepsPerSecond: rate * speed,
  });

  const playBack = usePlayBack(meta, data);
  const signals = useSignals(meta, data);

  const worldMarks = useMemo(() => {
    const before = stepsBeforeEpisode(meta.episodes, data.index, meta.raw.life_offset);
    return worldChangeMarks(meta.worldChanges, before, data.steps.length, data.index);
  }, [meta, data]);

  const divergent = playBack.firstDivergent;
  const timelineMarks = useMemo<TimelineMark[]>(() => [
    ...worldMarks.map((m) => ({ step: m.step, kind: "world-change" as const, label: m.label })),
    ...(divergent !== null ? [{ step: divergent, kind: "divergence" as const, label: "first divergent step" }] : []),
  ], [worldMarks, divergent]);
  const chartMarks = useMemo<ChartMark[]>(() => [
    ...worldMarks.map((m) => ({ step: m.step, color: WORLD_CHANGE_COLOR })),
    ...(divergent !== null ? [{ step: divergent, color: DIVERGENCE_COLOR }] : []),
  ], [worldMarks, divergent]);

  const returnSoFar = useMemo(() => {
    if (data.rewards.length === 0) return null;
    let total = 0;
    for (let i = 0; i < Math.min(step, data.rewards.length); i++) total += data.rewards[i];
    return total;
  }, [data.rewards, step]);

  const ended = data.entry.terminated === true ? "terminated" : data.entry.truncated === true ? "truncated" : null;
  const seek = useCallback((s: number) => { setPlaying(false); setStep(s); }, [setStep]);

  return (
    <div className="episode-replay">
      <div className="replay-main">
        <FramePlayer shown={frames.shown} wanted={frames.wanted} frameError={frames.failed}
          hasFrames={frameCount(data.frames) > 0} noneFound={frames.noneFound}
          ownMissing={ownFrameMissing(data.frames, step, frames.missing)} restoreStart={data.entry.start === "restore"} step={step} first={first} last={last} playing={playing}
          speed={speed} marks={timelineMarks} onStep={seek} onPlaying={setPlaying} onSpeed={setSpeed} />
        <aside className="replay-side">
          <CursorReadout step={step} last={last} plots={data.plots} returnSoFar={returnSoFar} ended={ended} />
          <FrameDetails arrays={data.details} steps={data.steps} step={step} actionSpace={meta.raw.action_space} />
          {worldMarks.length > 0 && (
            <section className="world-changes" data-testid="world-changes" aria-label="World changes">
              <h2>World changes</h2>
              <p className="muted">Each from the step after the one marked (the cursor's next step is the first under it).</p>
              <ul>{worldMarks.map((m, i) => (
                <li key={i} data-testid={`world-change-item-${i}`}>
                  <button type="button" className="link-button" onClick={() => seek(m.step)}>after step {m.step}</button>
                  {m.sessionStep !== null ? <span className="muted"> (session step {m.sessionStep})</span> : null}: {m.label}
                </li>
              ))}</ul>
            </section>
          )}
          <PlayBackPanel playBack={playBack} onSeek={seek} />
        </aside>
      </div>
      <p className="muted plots-load" data-testid="plots-load-ms" data-ms={Math.round(data.loadMs)}>
        {data.steps.length.toLocaleString()} steps · arrays loaded in {Math.round(data.loadMs)} ms · click a plot to go to its step
      </p>
      <ReplayPlots plots={data.plots} extra={playBack.plots} signals={signals} step={step} first={first} last={last}
        marks={chartMarks} onSeek={seek} />
    </div>
  );
}
