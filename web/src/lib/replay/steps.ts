// Where a replay's cursor is: a step number of the episode. Step 0 is the reset (observation row
// 0, before any action), step s the moment after the episode's s-th action (row s, reward
// rewards[s - 1]). A file that starts without a reset (`start: "none"`, the middle of an endless
// episode) has no row for step 0: its row k is step k + 1.

export interface EpisodeSteps {
  /** T, the episode's number of actions. */
  length: number;
  /** Whether observation row 0 is the reset's (T + 1 rows) or the first step's (T rows). */
  resetRow: boolean;
}

/** What a meta.json episode entry says about its rows. */
export function episodeSteps(entry: Readonly<Record<string, unknown>>): EpisodeSteps {
  const length = typeof entry.length === "number" && entry.length >= 0 ? Math.floor(entry.length) : 0;
  return { length, resetRow: entry.start !== "none" };
}

export function firstStep(steps: EpisodeSteps): number {
  return steps.resetRow ? 0 : Math.min(1, steps.length);
}

export function lastStep(steps: EpisodeSteps): number {
  return steps.length;
}

/** `step` moved into the episode's range (NaN gives the first step). */
export function clampStep(steps: EpisodeSteps, step: number): number {
  if (!Number.isFinite(step)) return firstStep(steps);
  return Math.min(lastStep(steps), Math.max(firstStep(steps), Math.round(step)));
}

/** The observation row (also the frame row of an unthinned recording) of a step. */
export function rowOfStep(steps: EpisodeSteps, step: number): number {
  return steps.resetRow ? step : step - 1;
}

/** The reward the step's action earned (none at the reset). */
export function rewardAt(rewards: readonly number[], step: number): number | null {
  if (step < 1 || step > rewards.length) return null;
  return rewards[step - 1];
}
