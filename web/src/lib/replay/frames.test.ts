import { describe, expect, it } from "vitest";
import { frameForStep, nearestIndex, stepOfFrame } from "./frames";
import { episodeSteps } from "./steps";

describe("frames", () => {
  const steps = episodeSteps({ length: 10, start: "reset" });

  it("shows each step's own frame when every row kept one", () => {
    const source = { kind: "rows", count: 11, steps } as const;
    expect(frameForStep(source, 0)).toEqual({ row: 0, step: 0, exact: true });
    expect(frameForStep(source, 7)).toEqual({ row: 7, step: 7, exact: true });
    expect(stepOfFrame(source, 7)).toBe(7);
    expect(frameForStep({ kind: "none" }, 3)).toBeNull();
    expect(frameForStep({ kind: "rows", count: 0, steps }, 3)).toBeNull();
  });

  it("rows of a file without a reset row start at step 1", () => {
    const source = { kind: "rows", count: 3, steps: episodeSteps({ length: 3, start: "none" }) } as const;
    expect(frameForStep(source, 1)).toEqual({ row: 0, step: 1, exact: true });
    expect(stepOfFrame(source, 2)).toBe(3);
  });

  it("shows the nearest kept frame of a thinned life", () => {
    // life_start 100; frames kept at life steps 100, 104, 108, 116
    const source = { kind: "thinned", lifeSteps: [100, 104, 108, 116], lifeStart: 100 } as const;
    expect(frameForStep(source, 0)).toEqual({ row: 0, step: 0, exact: true });
    expect(frameForStep(source, 5)).toEqual({ row: 1, step: 4, exact: false });
    expect(frameForStep(source, 6)).toEqual({ row: 1, step: 4, exact: false }); // a tie: the earlier
    expect(frameForStep(source, 7)).toEqual({ row: 2, step: 8, exact: false });
    expect(frameForStep(source, 40)).toEqual({ row: 3, step: 16, exact: false });
    expect(stepOfFrame(source, 3)).toBe(16);
    expect(frameForStep({ kind: "thinned", lifeSteps: [], lifeStart: 0 }, 3)).toBeNull();
  });

  it("finds the nearest value by bisection", () => {
    const values = [1, 3, 10, 20];
    expect(nearestIndex(values, -5)).toBe(0);
    expect(nearestIndex(values, 2)).toBe(0);
    expect(nearestIndex(values, 7)).toBe(2);
    expect(nearestIndex(values, 15)).toBe(2);
    expect(nearestIndex(values, 16)).toBe(3);
    expect(nearestIndex(values, 99)).toBe(3);
  });
});

describe("frames the server does not have", () => {
  it("shows the nearest row that has one: a restore's row 0 falls back to step 1's frame", () => {
    const source = { kind: "rows" as const, count: 4, steps: { length: 3, resetRow: true } };
    expect(frameForStep(source, 0, new Set([0]))).toEqual({ row: 1, step: 1, exact: false });
    expect(frameForStep(source, 2, new Set([0]))).toEqual({ row: 2, step: 2, exact: true });
    expect(frameForStep(source, 2, new Set([2, 3]))).toEqual({ row: 1, step: 1, exact: false });
    expect(frameForStep(source, 0, new Set([0, 1, 2, 3]))).toBeNull();
  });
});
