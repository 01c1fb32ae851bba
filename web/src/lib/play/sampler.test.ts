import { describe, expect, it } from "vitest";
import { sampleSpace } from "./sampler";

/** A fixed sequence standing in for Math.random. */
const sequence = (...values: number[]) => {
  let i = 0;
  return () => values[i++ % values.length];
};

describe("sampleSpace", () => {
  it("Discrete: each action, shifted by start", () => {
    expect(sampleSpace({ type: "discrete", n: 3, start: 0 }, sequence(0.0))).toBe(0);
    expect(sampleSpace({ type: "discrete", n: 3, start: 0 }, sequence(0.99))).toBe(2);
    expect(sampleSpace({ type: "discrete", n: 2, start: -1 }, sequence(0.6))).toBe(0);
  });
  it("Box: within the bounds, in its shape, integers for integer dtypes", () => {
    const box = { type: "box", shape: [2, 1], dtype: "float32", low: [-2, 0], high: [2, 1] };
    expect(sampleSpace(box, sequence(0.5, 0.25))).toEqual([[0], [0.25]]);
    expect(sampleSpace({ type: "box", shape: [3], dtype: "int64", low: 0, high: 2 }, sequence(0, 0.5, 0.999))).toEqual([0, 1, 2]);
  });
  it("Box with infinite bounds draws around the finite ones", () => {
    const value = sampleSpace({ type: "box", shape: [2], dtype: "float64", low: ["-inf", 5], high: ["inf", "inf"] }, sequence(1, 0)) as number[];
    expect(value).toEqual([1, 5]);
  });
  it("MultiDiscrete, MultiBinary, Dict and Tuple", () => {
    expect(sampleSpace({ type: "multi_discrete", nvec: [3, 2] }, sequence(0.9, 0.1))).toEqual([2, 0]);
    expect(sampleSpace({ type: "multi_binary", shape: [2] }, sequence(0.2, 0.7))).toEqual([0, 1]);
    const dict = { type: "dict", spaces: { a: { type: "discrete", n: 2 }, b: { type: "tuple", spaces: [{ type: "discrete", n: 4 }] } } };
    expect(sampleSpace(dict, sequence(0.6, 0.5))).toEqual({ a: 1, b: [2] });
  });
  it("stays inside random draws of many steps", () => {
    const box = { type: "box", shape: [4], dtype: "float32", low: -1, high: 1 };
    for (let i = 0; i < 200; i++) {
      for (const v of sampleSpace(box) as number[]) expect(Math.abs(v)).toBeLessThanOrEqual(1);
    }
  });
  it("refuses an unknown space", () => {
    expect(() => sampleSpace({ type: "graph" })).toThrow(/graph/);
  });
});
