// The recording's world changes (recording.json `world_changes`: each applied change is its
// timeline entry, e.g. {"at": 5000, "change": "mass", "body": "hand", "scale": 2.0}, plus
// `index`, `session_step`, `seq`, `episode` and `episode_step`) placed on an episode's timeline.
//
// A mark's step is the number of the episode's steps taken before the change applied: the
// cursor step after which the world is changed (its next step is the first under it), and 0 for
// a change met at the episode's reset. From `episode` and `episode_step` (that of the step or
// reset event that applied it: episode_step k > 0 applied just before step k, so the mark is at
// k - 1), else from `at`, which counts the session's steps across episodes: the episode's step s
// is session step `before + s`, where `before` is the steps the session took before the episode.
import { describeChange } from "./describe";
import { finiteNumber, isEntry, type WorldChangeEntry } from "./entries";

export interface WorldChangeMark {
  step: number;
  label: string;
  /** The session's step count when it applied (`session_step`, else `at`). */
  sessionStep: number | null;
}

interface EpisodeEntry {
  index?: unknown;
  length?: unknown;
  life_start?: unknown;
}

/** Steps the session took before episode `index` began. */
export function stepsBeforeEpisode(
  episodes: readonly EpisodeEntry[],
  index: number,
  lifeOffset: unknown,
): number {
  const entry = episodes.find((e) => e.index === index);
  if (entry && typeof entry.life_start === "number" && typeof lifeOffset === "number") {
    return entry.life_start - lifeOffset;
  }
  let total = 0;
  for (const e of episodes) {
    if (typeof e.index === "number" && e.index < index && typeof e.length === "number") total += e.length;
  }
  return total;
}

/** Where a change falls in episode `episode` (null when elsewhere), from where it applied or its `at`. */
function markStep(change: WorldChangeEntry, episode: number, before: number): number | null {
  const applied = finiteNumber(change.episode);
  const episodeStep = finiteNumber(change.episode_step);
  if (applied !== null && episodeStep !== null) return applied === episode ? Math.max(0, episodeStep - 1) : null;
  const at = finiteNumber(change.at);
  return at === null ? null : at - before;
}

/** The changes that fall within episode `episode` (steps 0..length), in order of their step. */
export function worldChangeMarks(changes: unknown, before: number, length: number, episode = -1): WorldChangeMark[] {
  if (!Array.isArray(changes)) return [];
  const marks: WorldChangeMark[] = [];
  for (const entry of changes) {
    if (!isEntry(entry)) continue;
    const step = markStep(entry, episode, before);
    if (step === null || step < 0 || step > length) continue;
    marks.push({ step, label: describeChange(entry), sessionStep: finiteNumber(entry.session_step) ?? finiteNumber(entry.at) });
  }
  return marks.sort((a, b) => a.step - b.step);
}
