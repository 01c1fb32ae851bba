// Where an agent's recorded run is at a moment of the comparison. Every agent of a comparison
// starts from the same snapshot at session step `first_step`, and its i-th action (i from 0)
// is session step `first_step + i` (the chart's x, the measures' steps). Its recording holds the
// run as episodes one after another (meta.json `episodes`, each with its `length` in actions);
// the moment of session step s is the frame after the run's (s - first_step + 1)-th action: in
// the episode whose actions include it, at that episode's step (lib/replay/steps.ts: step k is
// the moment after the episode's k-th action). A run whose recording holds fewer actions than
// the moment stays on its last step and says it ended there.

export interface RunEpisode {
  /** The episode's index in the recording. */
  index: number;
  /** The run's actions before the episode's first. */
  start: number;
  /** Its actions. */
  length: number;
  /** Whether it has a file to read (meta.json `file: null`: its arrays could not be written). */
  readable: boolean;
  /** How it ended: "terminated", "truncated", or null (cut off when the run stopped). */
  ending: "terminated" | "truncated" | null;
}

export type RunMoment =
  | { kind: "empty" }
  /** Inside an episode: its step `step` (1..length); `endsHere` when that is its last step. */
  | { kind: "episode"; episode: RunEpisode; step: number; endsHere: boolean }
  /** After the recorded run: its last episode's last step, the run having ended after `actions`. */
  | { kind: "ended"; episode: RunEpisode; step: number; actions: number };

interface EpisodeEntry {
  index?: unknown;
  length?: unknown;
  file?: unknown;
  terminated?: unknown;
  truncated?: unknown;
}

/** The recording's episodes (meta.json `episodes`) in order, each placed in the run. */
export function runEpisodes(entries: readonly EpisodeEntry[]): RunEpisode[] {
  const ordered = entries
    .filter((e): e is EpisodeEntry & { index: number } => typeof e.index === "number")
    .sort((a, b) => a.index - b.index);
  const out: RunEpisode[] = [];
  let start = 0;
  for (const entry of ordered) {
    const length = typeof entry.length === "number" && entry.length > 0 ? Math.floor(entry.length) : 0;
    const ending = entry.terminated === true ? "terminated" : entry.truncated === true ? "truncated" : null;
    out.push({ index: entry.index, start, length, readable: entry.file !== null, ending });
    start += length;
  }
  return out;
}

/** The run's recorded actions. */
export function runActions(episodes: readonly RunEpisode[]): number {
  const last = episodes[episodes.length - 1];
  return last ? last.start + last.length : 0;
}

/** Where the run is after its `action`-th action (1 is the first; below 1 counts as 1). */
export function momentAfter(episodes: readonly RunEpisode[], action: number): RunMoment {
  const withSteps = episodes.filter((e) => e.length > 0);
  const last = withSteps[withSteps.length - 1];
  if (!last) return { kind: "empty" };
  const wanted = Math.max(1, Math.round(action));
  const total = last.start + last.length;
  if (wanted > total) return { kind: "ended", episode: last, step: last.length, actions: total };
  const episode = withSteps.find((e) => wanted <= e.start + e.length)!;
  const step = wanted - episode.start;
  return { kind: "episode", episode, step, endsHere: step === episode.length };
}

/** The run's action (1 is the first) at session step `sessionStep` of a run that began at `firstStep`. */
export function actionAt(sessionStep: number, firstStep: number): number {
  return sessionStep - firstStep + 1;
}

/** The session step at which every agent of the comparison took its first action. */
export function firstStepOf(comparison: { first_step?: number | null; warmup?: number | null }): number {
  return comparison.first_step ?? comparison.warmup ?? 0;
}

/** The return of an episode's rewards up to and including step `step` (its first `step` rewards). */
export function returnUpTo(rewards: readonly number[], step: number): number {
  let total = 0;
  for (let i = 0; i < Math.min(step, rewards.length); i++) total += rewards[i];
  return total;
}
