import { describe, expect, it } from "vitest";
import { clampStep, episodeSteps, firstStep, rewardAt, rowOfStep } from "./steps";

describe("steps", () => {
  it("maps cursor steps to observation rows and rewards", () => {
    const reset = episodeSteps({ length: 3, start: "reset" });
    expect(firstStep(reset)).toBe(0);
    expect(rowOfStep(reset, 2)).toBe(2);
    expect(clampStep(reset, 9)).toBe(3);
    expect(clampStep(reset, -1)).toBe(0);
    expect(clampStep(reset, NaN)).toBe(0);
    const continued = episodeSteps({ length: 3, start: "none" });
    expect(firstStep(continued)).toBe(1);
    expect(rowOfStep(continued, 1)).toBe(0);
    expect(clampStep(continued, 0)).toBe(1);
    expect(rewardAt([0.5, 1.5, 2.5], 0)).toBeNull();
    expect(rewardAt([0.5, 1.5, 2.5], 2)).toBe(1.5);
    expect(rewardAt([0.5], 4)).toBeNull();
  });
});
