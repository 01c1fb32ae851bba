import { describe, expect, it } from "vitest";
import type { Schemas } from "../../api/client";
import { seedReplays, spreadOf, spreadRows, spreadText } from "./seeds";

type Run = Schemas["ComparisonRunPublic"];

function run(seed: number, success: number | null, recoverySteps: number | null, retention: number | string,
             recordingId: string | null = null): Run {
  return {
    seed, recording_id: recordingId, reward_windows: [],
    measures: {
      success, success_of: "episodes", compute_s: 0.001 * (seed + 1),
      recovery: [{ at: 2200, changes: [], steps: recoverySteps, recovered: recoverySteps !== null, too_close: false }],
      retention: [{ at: 4200, retention, too_close: false }],
    },
  };
}

describe("a measure over seeds", () => {
  it("is the mean of the finite values, with their range", () => {
    expect(spreadOf([0.25, 0.5, null, "nan", 0.75])).toEqual({ mean: 0.5, min: 0.25, max: 0.75, n: 3 });
    expect(spreadOf([null, undefined])).toBeNull();
  });

  it("reads as mean (min–max), or the value alone when every run agrees", () => {
    expect(spreadText({ mean: 0.4, min: 0.2, max: 0.6, n: 3 })).toBe("0.400 (0.200–0.600)");
    expect(spreadText({ mean: 150, min: 150, max: 150, n: 2 }, 1)).toBe("150.0");
    expect(spreadText(null)).toBe("–");
  });
});

describe("an agent's rows over its runs", () => {
  it("give success, compute in ms, a recovery per change and a retention per return", () => {
    const rows = spreadRows([run(0, 0.5, 100, 0.9), run(1, 0.7, 300, "nan"), run(2, 0.6, null, 0.7)]);
    expect(rows.map((r) => [r.label, r.text])).toEqual([
      ["Success", "0.600 (0.500–0.700)"],
      ["Compute (ms per decision)", "2.000 (1.000–3.000)"],
      ["Recovery at 2200 (steps)", "200.0 (100.0–300.0)"],
      ["Retention at 4200", "0.800 (0.700–0.900)"],
    ]);
    expect(rows[2].spread?.n).toBe(2); // the run that never recovered has no step count
    expect(spreadRows([])).toEqual([]);
  });
});

describe("the replays of the same moment", () => {
  it("pair each seed with every agent's recorded run from it", () => {
    const agents = [
      { name: "adaptive", runs: [run(0, 1, 1, 1, "s-a0"), run(1, 1, 1, 1, "s-a1")] },
      { name: "fixed", runs: [run(0, 1, 1, 1, "s-f0"), run(1, 1, 1, 1, null)] },
    ];
    expect(seedReplays(agents, [0, 1])).toEqual([
      { seed: 0, replays: [{ name: "adaptive", path: "/recordings/s-a0" }, { name: "fixed", path: "/recordings/s-f0" }] },
      { seed: 1, replays: [{ name: "adaptive", path: "/recordings/s-a1" }, { name: "fixed", path: null }] },
    ]);
  });
});
