import { describe, expect, it } from "vitest";
import { controlRate, stepsDue } from "./playerClock";

describe("player clock", () => {
  it("advances by rate times speed, carrying fractions", () => {
    expect(stepsDue(0, 1000, 30, 1)).toEqual({ steps: 30, carry: 0 });
    const quarter = stepsDue(0, 100, 30, 0.25); // 0.75 of a step
    expect(quarter.steps).toBe(0);
    expect(stepsDue(quarter.carry, 100, 30, 0.25).steps).toBe(1);
    expect(stepsDue(0, 100, 50, 4).steps).toBe(20);
    expect(stepsDue(0, -5, 50, 4).steps).toBe(0);
    expect(controlRate({ spec: { metadata: { control_rate: 50 } } })).toBe(50);
    expect(controlRate({ metadata: { render_fps: 15 } })).toBe(15);
    expect(controlRate({})).toBe(30);
  });
});
