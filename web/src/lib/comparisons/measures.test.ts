import { describe, expect, it } from "vitest";
import {
  agentRow, comparisonPath, computeText, createdText, formatMeasure, recoveryCell, replayPath,
  retentionCell, successText, timelineOf,
} from "./measures";

describe("measures in words", () => {
  it("formats success as a share of what it counts", () => {
    expect(successText(0.4, "episodes")).toBe("40% of episodes");
    expect(successText(0.125, "steps")).toBe("12.5% of steps");
    expect(successText(1, null)).toBe("100%");
    expect(successText(null, null)).toBe("–");
    expect(successText("nan", "steps")).toBe("nan");
  });

  it("gives compute per decision in milliseconds", () => {
    expect(computeText(0.0021)).toBe("2.100 ms");
    expect(computeText(null)).toBe("–");
    expect(computeText(undefined)).toBe("–");
    expect(computeText("inf")).toBe("inf");
  });

  it("says steps, not recovered or too close for each change, with the worst level", () => {
    const base = { changes: [], before: -0.3, worst: -0.8123, recovered: true, too_close: false };
    expect(recoveryCell({ ...base, at: 2200, steps: 150 })).toEqual({ at: 2200, text: "150 steps", worst: "worst -0.812" });
    expect(recoveryCell({ ...base, at: 10, steps: 0 })).toEqual({ at: 10, text: "0 steps", worst: "worst -0.812" });
    expect(recoveryCell({ ...base, at: 4200, steps: null, recovered: false, worst: "-inf" }))
      .toEqual({ at: 4200, text: "not recovered", worst: "worst -inf" });
    expect(recoveryCell({ ...base, at: 90, steps: null, recovered: false, worst: null, before: null, too_close: true }))
      .toEqual({ at: 90, text: "too close to measure", worst: "" });
  });

  it("gives retention per return, or why it was not measured", () => {
    expect(retentionCell({ at: 4200, returns_to: 200, before: -0.3, after: -0.33, retention: 0.9, too_close: false }))
      .toEqual({ at: 4200, returnsTo: 200, text: "0.900" });
    expect(retentionCell({ at: 4200, returns_to: 200, retention: null, too_close: true }))
      .toEqual({ at: 4200, returnsTo: 200, text: "too close to measure" });
    expect(retentionCell({ at: 4200, retention: null, too_close: false })).toEqual({ at: 4200, returnsTo: null, text: "–" });
  });

  it("keeps strings and marks missing measures", () => {
    expect(formatMeasure(-0.31234)).toBe("-0.312");
    expect(formatMeasure(2, 1)).toBe("2.0");
    expect(formatMeasure("nan")).toBe("nan");
    expect(formatMeasure(null)).toBe("–");
  });
});

describe("agentRow", () => {
  it("turns an agent's entry into its table row with a replay link", () => {
    const row = agentRow({
      name: "mine", agent: "my_agent:make", recording_id: "s-0123456789ab", steps: 6000, episodes: 30,
      measures: {
        success: 0.5, success_of: "episodes", compute_s: 0.0005,
        recovery: [{ at: 2200, changes: [], before: -0.3, steps: 100, worst: -0.7, recovered: true, too_close: false }],
        retention: [{ at: 4200, returns_to: 200, retention: 0.95, too_close: false }],
      },
      reward_windows: [],
    });
    expect(row).toEqual({
      name: "mine", agent: "my_agent:make", success: "50% of episodes",
      recovery: [{ at: 2200, text: "100 steps", worst: "worst -0.700" }],
      retention: [{ at: 4200, returnsTo: 200, text: "0.950" }],
      compute: "0.500 ms", episodes: "30", steps: "6000", replay: "/recordings/s-0123456789ab",
      recordingId: "s-0123456789ab",
    });
  });

  it("has no link without a recording and dashes for what is missing", () => {
    const row = agentRow({ name: "base", recording_id: null });
    expect(row.replay).toBeNull();
    expect(row.recordingId).toBeNull();
    expect([row.success, row.compute, row.episodes, row.steps]).toEqual(["–", "–", "–", "–"]);
    expect(row.recovery).toEqual([]);
    expect(agentRow({ name: "x", recording_id: "" }).replay).toBeNull();
  });
});

describe("changes and links", () => {
  it("takes the timeline from the document, else from its kwargs", () => {
    const entry = { at: 5, change: "mass" };
    expect(timelineOf({ world_changes: [entry], kwargs: {} })).toEqual([entry]);
    expect(timelineOf({ world_changes: null, kwargs: { world_changes: [entry] } })).toEqual([entry]);
    expect(timelineOf({ world_changes: null, kwargs: null })).toEqual([]);
  });

  it("builds paths and dates", () => {
    expect(replayPath("s-1")).toBe("/recordings/s-1");
    expect(comparisonPath("cmp-0123456789ab")).toBe("/comparisons/cmp-0123456789ab");
    expect(createdText("2026-12-02T18:00:00.123Z")).toBe("2026-12-02 18:00:00 UTC");
    expect(createdText("yesterday")).toBe("yesterday");
    expect(createdText(null)).toBe("–");
  });
});
