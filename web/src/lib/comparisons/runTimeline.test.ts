import { describe, expect, it } from "vitest";
import { actionAt, firstStepOf, momentAfter, returnUpTo, runActions, runEpisodes } from "./runTimeline";

// A run of 3 + 0 + 4 actions: episode 0 terminated, 1 empty, 2 cut off when the run stopped.
const EPISODES = runEpisodes([
  { index: 2, length: 4, file: "episode_000002.npz" },
  { index: 0, length: 3, file: "episode_000000.npz", terminated: true },
  { index: 1, length: 0, file: null, truncated: true },
]);

describe("a recorded run's episodes", () => {
  it("follow one another in index order, each starting where the one before ended", () => {
    expect(EPISODES.map((e) => [e.index, e.start, e.length])).toEqual([[0, 0, 3], [1, 3, 0], [2, 3, 4]]);
    expect(EPISODES.map((e) => e.ending)).toEqual(["terminated", "truncated", null]);
    expect(EPISODES.map((e) => e.readable)).toEqual([true, false, true]);
    expect(runActions(EPISODES)).toBe(7);
  });

  it("place each action in its episode, the last one of an episode ending there", () => {
    expect(momentAfter(EPISODES, 1)).toMatchObject({ kind: "episode", episode: { index: 0 }, step: 1, endsHere: false });
    expect(momentAfter(EPISODES, 3)).toMatchObject({ kind: "episode", episode: { index: 0 }, step: 3, endsHere: true });
    // the empty episode holds no action: the 4th is episode 2's first
    expect(momentAfter(EPISODES, 4)).toMatchObject({ kind: "episode", episode: { index: 2 }, step: 1, endsHere: false });
    expect(momentAfter(EPISODES, 7)).toMatchObject({ kind: "episode", episode: { index: 2 }, step: 4, endsHere: true });
  });

  it("stay on the last step, saying the run ended, past the recorded actions", () => {
    expect(momentAfter(EPISODES, 12)).toEqual({ kind: "ended", episode: EPISODES[2], step: 4, actions: 7 });
  });

  it("start at the first action when asked for one before it", () => {
    expect(momentAfter(EPISODES, 0)).toMatchObject({ kind: "episode", episode: { index: 0 }, step: 1 });
  });

  it("hold no moment when nothing was recorded", () => {
    expect(momentAfter(runEpisodes([]), 5)).toEqual({ kind: "empty" });
    expect(momentAfter(runEpisodes([{ index: 0, length: 0 }]), 1)).toEqual({ kind: "empty" });
    expect(runActions([])).toBe(0);
  });
});

describe("session steps and the run's actions", () => {
  it("count the first action as the comparison's first step", () => {
    expect(actionAt(200, 200)).toBe(1);
    expect(actionAt(2199, 200)).toBe(2000);
  });

  it("take the first step from first_step, else the warm-up, else 0", () => {
    expect(firstStepOf({ first_step: 150, warmup: 200 })).toBe(150);
    expect(firstStepOf({ first_step: null, warmup: 200 })).toBe(200);
    expect(firstStepOf({})).toBe(0);
  });
});

describe("an episode's return so far", () => {
  it("sums the rewards of its steps up to the cursor's", () => {
    expect(returnUpTo([1, 0.5, -2], 0)).toBe(0);
    expect(returnUpTo([1, 0.5, -2], 2)).toBe(1.5);
    expect(returnUpTo([1, 0.5, -2], 9)).toBe(-0.5);
  });
});
