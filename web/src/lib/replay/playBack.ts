// Play back: the recorded episode's actions applied to a new session reset with its seed and
// options, each step's observation digest and reward compared with the recording's. A step
// matches when its observation digest equals the recorded row's (when the recording has
// digests), its reward is the recorded one exactly (NaN equals NaN) and its terminated and
// truncated flags are the recorded ones.
import { type EpisodeSteps, rowOfStep } from "./steps";

export interface RecordedEpisode {
  steps: EpisodeSteps;
  rewards: readonly number[];
  terminated: readonly boolean[];
  truncated: readonly boolean[];
  /** Hex sha256 of each observation row; empty when the recording gave none. */
  digests: readonly string[];
}

export interface StepVerdict {
  /** 0 for the reset, s for the s-th action. */
  step: number;
  recordedReward: number | null;
  playedReward: number | null;
  rewardMatch: boolean;
  /** null when there was no digest to compare. */
  observationMatch: boolean | null;
  flagsMatch: boolean;
  match: boolean;
}

export interface PlayedStep {
  reward: number;
  terminated: boolean;
  truncated: boolean;
  digest: string | null;
}

/** Rewards are equal when they are the same number, or both NaN. */
export function sameReward(a: number, b: number): boolean {
  return a === b || (Number.isNaN(a) && Number.isNaN(b));
}

function digestMatch(recorded: RecordedEpisode, step: number, played: string | null): boolean | null {
  const row = rowOfStep(recorded.steps, step);
  const expected = recorded.digests[row];
  if (expected === undefined || played === null) return null;
  return expected.toLowerCase() === played.toLowerCase();
}

/** The reset's verdict: its observation against row 0. */
export function judgeReset(recorded: RecordedEpisode, digest: string | null): StepVerdict {
  const observationMatch = recorded.steps.resetRow ? digestMatch(recorded, 0, digest) : null;
  return {
    step: 0, recordedReward: null, playedReward: null, rewardMatch: true, observationMatch,
    flagsMatch: true, match: observationMatch !== false,
  };
}

/** The verdict on the s-th action's outcome. */
export function judgeStep(recorded: RecordedEpisode, step: number, played: PlayedStep): StepVerdict {
  const recordedReward = step >= 1 && step <= recorded.rewards.length ? recorded.rewards[step - 1] : null;
  const rewardMatch = recordedReward !== null && sameReward(recordedReward, played.reward);
  const observationMatch = digestMatch(recorded, step, played.digest);
  const flagsMatch =
    recorded.terminated[step - 1] === played.terminated && recorded.truncated[step - 1] === played.truncated;
  return {
    step, recordedReward, playedReward: played.reward, rewardMatch, observationMatch, flagsMatch,
    match: rewardMatch && flagsMatch && observationMatch !== false,
  };
}

/** The first step that did not match, or null. */
export function firstDivergentStep(verdicts: readonly StepVerdict[]): number | null {
  for (const verdict of verdicts) if (!verdict.match) return verdict.step;
  return null;
}

/** What went wrong at a step, in words ("" when it matched). */
export function divergence(verdict: StepVerdict): string {
  const parts: string[] = [];
  if (verdict.observationMatch === false) parts.push("observation differs");
  if (!verdict.rewardMatch && verdict.step > 0) {
    parts.push(`reward ${String(verdict.playedReward)} (recorded ${String(verdict.recordedReward)})`);
  }
  if (!verdict.flagsMatch) parts.push("episode end differs");
  return parts.join(", ");
}

/** Whether play back can reproduce the episode, or why not. */
export function playBackBlocker(entry: Record<string, unknown>, kwargs: unknown): string | null {
  if (entry.start === "restore") return "this episode began from a snapshot restore, which play back cannot repeat";
  if (entry.start === "none") return "this file continues an episode begun in an earlier file (no reset to repeat)";
  if (entry.file === null) return "this episode's arrays could not be built";
  if (typeof kwargs === "object" && kwargs !== null && "_unparsed" in kwargs) {
    return "the recording's kwargs were not JSON, so the same environment cannot be made";
  }
  return null;
}
