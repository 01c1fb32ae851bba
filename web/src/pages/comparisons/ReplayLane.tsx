// One agent's lane in the side-by-side replay: its recorded frame at the shared cursor (loaded
// and cached as the Replay page does it, components/replay/useFrames.ts), where its run is then
// (episode and step, an episode that ends there, a run that ended before it: its last frame
// stays), the reward its action earned there and the episode's return so far, and a link to
// that moment on the Replay page.
//
// data-testids (<name>: the agent's name, characters other than letters, digits, '_' and '-' as
// '-'): side-lane-<name>; side-frame-<name> (the <img>, with data-episode, data-step (the
// episode step at the cursor), data-frame-step (that of the frame shown) and data-loading),
// side-no-frames-<name>, side-not-recorded-<name>, side-error-<name>, side-where-<name>,
// side-ended-<name>, side-reward-<name>, side-return-<name>, side-open-<name>.
import { useEffect, useMemo } from "react";
import { Link } from "react-router-dom";
import { useFrames } from "../../components/replay/useFrames";
import { runActions, type RunEpisode, momentAfter, returnUpTo, runEpisodes } from "../../lib/comparisons/runTimeline";
import type { Lane } from "../../lib/comparisons/sideBySide";
import { frameCount, type FrameSource } from "../../lib/replay/frames";
import { formatValue } from "../../lib/replay/numberFormat";
import { controlRate } from "../../lib/replay/playerClock";
import { rewardAt } from "../../lib/replay/steps";
import { replayPath } from "../../lib/comparisons/measures";
import { type EpisodeData, type RecordingMeta, useRecording } from "../replay/replayData";
import { useRunEpisode } from "./useRunEpisode";

/** Steps before an episode's end at which the next one is loaded ahead. */
const LOAD_AHEAD = 30;
const NO_FRAMES: FrameSource = { kind: "none" };

export function testName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, "-");
}

interface Props {
  lane: Lane;
  /** The run's action at the shared cursor (1: its first). */
  action: number;
  playing: boolean;
  stepsPerSecond: number;
  /** Called once the recording is read: its recorded actions and control rate. */
  onRecorded: (name: string, actions: number, rate: number) => void;
}

export function ReplayLane(props: Props) {
  const { lane } = props;
  const id = testName(lane.name);
  return (
    <article className="side-lane" data-testid={`side-lane-${id}`} style={{ borderTopColor: lane.color }}>
      <h3><span className="swatch" style={{ background: lane.color }} /> {lane.name}</h3>
      {lane.recordingId === null ? (
        <p className="muted side-none" data-testid={`side-not-recorded-${id}`}>This run was not recorded (compare with --record to see it).</p>
      ) : (
        <RecordedLane {...props} recordingId={lane.recordingId} />
      )}
    </article>
  );
}

function RecordedLane({ lane, recordingId, action, playing, stepsPerSecond, onRecorded }: Props & { recordingId: string }) {
  const id = testName(lane.name);
  const recording = useRecording(recordingId);
  if (recording.state === "loading") return <p className="muted side-none">Loading its recording…</p>;
  if (recording.state === "error") return <p className="error" data-testid={`side-error-${id}`}>{recording.message}</p>;
  return <RunLane lane={lane} meta={recording.value} action={action} playing={playing} stepsPerSecond={stepsPerSecond}
    onRecorded={onRecorded} />;
}

interface RunProps {
  lane: Lane;
  meta: RecordingMeta;
  action: number;
  playing: boolean;
  stepsPerSecond: number;
  onRecorded: Props["onRecorded"];
}

function nextReadable(episodes: readonly RunEpisode[], after: RunEpisode): number | null {
  return episodes.find((e) => e.start > after.start && e.readable && e.length > 0)?.index ?? null;
}

function RunLane({ lane, meta, action, playing, stepsPerSecond, onRecorded }: RunProps) {
  const id = testName(lane.name);
  const episodes = useMemo(() => runEpisodes(meta.episodes), [meta]);
  useEffect(() => onRecorded(lane.name, runActions(episodes), controlRate(meta.raw)), [lane.name, episodes, meta, onRecorded]);

  const moment = momentAfter(episodes, action);
  const episode = moment.kind === "empty" ? null : moment.episode;
  const step = moment.kind === "empty" ? 0 : moment.step;
  const index = episode && episode.readable ? episode.index : null;
  const upcoming = episode && episode.length - step <= LOAD_AHEAD ? nextReadable(episodes, episode) : null;
  const data = useRunEpisode(meta, index, upcoming);
  const ready = data.state === "ready" && data.value.index === index ? data.value : null;
  const frames = useFrames({
    recordingId: meta.id, episode: index ?? -1, source: ready ? ready.frames : NO_FRAMES, step, playing, stepsPerSecond,
  });

  if (moment.kind === "empty") {
    return <p className="muted side-none" data-testid={`side-where-${id}`}>Its recording has no finished episode with steps.</p>;
  }
  const ep = moment.episode;
  const loading = frames.wanted !== null && (frames.shown === null || frames.shown.row !== frames.wanted.row);
  return (
    <>
      <div className="side-frame">
        {!ep.readable ? (
          <p className="muted side-none" data-testid={`side-error-${id}`}>Episode {ep.index} could not be written as a file.</p>
        ) : data.state === "error" ? (
          <p className="error side-none" data-testid={`side-error-${id}`}>{data.message}</p>
        ) : ready === null ? (
          <p className="muted side-none">Loading episode {ep.index}…</p>
        ) : frameCount(ready.frames) === 0 ? (
          <p className="muted side-none" data-testid={`side-no-frames-${id}`}>Recorded without frames: its numbers are below.</p>
        ) : frames.noneFound ? (
          <p className="muted side-none" data-testid={`side-no-frames-${id}`}>None of this episode&apos;s frames are on the server.</p>
        ) : frames.shown ? (
          <img data-testid={`side-frame-${id}`} src={frames.shown.url} alt={`${lane.name} at episode ${ep.index}, step ${frames.shown.step}`}
            data-episode={ep.index} data-step={step} data-frame-step={frames.shown.step} data-loading={loading ? "true" : "false"} />
        ) : (
          <p className="muted side-none">Loading frame…</p>
        )}
      </div>
      {frames.failed && <p className="error" data-testid={`side-error-${id}`}>{frames.failed}</p>}
      <LaneReadout id={id} meta={meta} moment={{ episode: ep, step }} ended={moment.kind === "ended" ? moment.actions : null}
        endsHere={moment.kind === "episode" && moment.endsHere} data={ready} />
    </>
  );
}

interface ReadoutProps {
  id: string;
  meta: RecordingMeta;
  moment: { episode: RunEpisode; step: number };
  /** The run's recorded actions when the cursor is past them, else null. */
  ended: number | null;
  endsHere: boolean;
  data: EpisodeData | null;
}

function LaneReadout({ id, meta, moment, ended, endsHere, data }: ReadoutProps) {
  const { episode, step } = moment;
  // past the end of its run the agent took no step at the cursor: no reward, its final return
  const reward = data && ended === null ? rewardAt(data.rewards, step) : null;
  const returnSoFar = data && data.rewards.length > 0 ? returnUpTo(data.rewards, step) : null;
  const link = `${replayPath(meta.id)}?episode=${episode.index}&step=${step}`;
  return (
    <dl className="side-readout">
      <div>
        <dt>Where</dt>
        <dd data-testid={`side-where-${id}`}>episode {episode.index}, step {step} of {episode.length}</dd>
      </div>
      {ended !== null ? (
        <div className="side-ended">
          <dt>Ended</dt><dd data-testid={`side-ended-${id}`}>its run ended after {ended} steps: showing its last frame</dd>
        </div>
      ) : endsHere ? (
        <div className="side-ended">
          <dt>Ended</dt><dd data-testid={`side-ended-${id}`}>episode {episode.index} ends here{episode.ending ? ` (${episode.ending})` : ""}</dd>
        </div>
      ) : null}
      <div>
        <dt>Reward</dt>
        <dd data-testid={`side-reward-${id}`} data-value={reward ?? undefined}>{formatValue(reward)}</dd>
      </div>
      <div>
        <dt>Return so far</dt>
        <dd data-testid={`side-return-${id}`} data-value={returnSoFar ?? undefined}>{formatValue(returnSoFar)}</dd>
      </div>
      <div className="side-open"><Link to={link} data-testid={`side-open-${id}`}>open this moment in its replay</Link></div>
    </dl>
  );
}
