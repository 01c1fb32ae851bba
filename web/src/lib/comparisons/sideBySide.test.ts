import { describe, expect, it } from "vitest";
import type { Comparison } from "./measures";
import { AGENT_COLORS } from "./chart";
import { clampCursor, cursorRange, lanesFor, overlaySeeds } from "./sideBySide";

type Agent = Comparison["agents"][number];

const overSeeds: Pick<Comparison, "seeds" | "seed" | "agents" | "first_step" | "warmup"> = {
  seed: 0, seeds: [0, 1], first_step: 200, warmup: 200,
  agents: [
    { name: "steady", recording_id: "rec-a0", steps: 100, runs: [
      { seed: 0, recording_id: "rec-a0", steps: 100, reward_windows: [] },
      { seed: 1, recording_id: null, steps: 100, reward_windows: [] },
    ] } as Agent,
    { name: "shaky", recording_id: "rec-b0", steps: 100, runs: [
      { seed: 0, recording_id: "rec-b0", steps: 100, reward_windows: [] },
      { seed: 1, recording_id: "rec-b1", steps: 120, reward_windows: [] },
    ] } as Agent,
  ],
};

const once: Pick<Comparison, "seeds" | "seed" | "agents"> = {
  seed: 3,
  agents: [{ name: "only", recording_id: "rec-x", steps: 50 } as Agent, { name: "unrecorded", steps: 50 } as Agent],
};

describe("the side-by-side replay's seeds", () => {
  it("are the comparison's seeds when its agents kept a run per seed", () => {
    expect(overlaySeeds(overSeeds)).toEqual([0, 1]);
  });

  it("are its one seed (or none) when they did not", () => {
    expect(overlaySeeds(once)).toEqual([3]);
    expect(overlaySeeds({ ...once, seed: undefined })).toEqual([null]);
  });
});

describe("the lanes of a seed", () => {
  it("give each agent's recording of its run from that seed, in its colour", () => {
    expect(lanesFor(overSeeds, 1)).toEqual([
      { name: "steady", color: AGENT_COLORS[0], recordingId: null, steps: 100 },
      { name: "shaky", color: AGENT_COLORS[1], recordingId: "rec-b1", steps: 120 },
    ]);
  });

  it("give the top-level run of an agent that kept no runs", () => {
    expect(lanesFor(once, 3).map((l) => l.recordingId)).toEqual(["rec-x", null]);
  });

  it("have no recording for a seed the agent has no run of", () => {
    expect(lanesFor(overSeeds, 7).map((l) => l.recordingId)).toEqual([null, null]);
  });
});

describe("the shared cursor", () => {
  it("spans the first step to the longest run's last, said or recorded", () => {
    const lanes = lanesFor(overSeeds, 1);
    expect(cursorRange(overSeeds, lanes, [])).toEqual({ first: 200, last: 319 });
    expect(cursorRange(overSeeds, lanes, [40, 500])).toEqual({ first: 200, last: 699 });
  });

  it("keeps at least one step when nothing is known", () => {
    expect(cursorRange({}, [], [])).toEqual({ first: 0, last: 0 });
  });

  it("is clamped into its range", () => {
    const range = { first: 200, last: 319 };
    expect(clampCursor(range, 10)).toBe(200);
    expect(clampCursor(range, 400)).toBe(319);
    expect(clampCursor(range, 250.4)).toBe(250);
    expect(clampCursor(range, Number.NaN)).toBe(200);
  });
});
