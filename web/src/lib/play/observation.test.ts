import { describe, expect, it } from "vitest";
import { labelledObservation, observationMode } from "./observation";
import { randomSeed } from "./seeds";

describe("observationMode", () => {
  it("full for small vectors, none for pictures and big ones", () => {
    expect(observationMode({ type: "box", shape: [4], dtype: "float32" })).toBe("full");
    expect(observationMode({ type: "box", shape: [210, 160, 3], dtype: "uint8" })).toBe("none");
    expect(observationMode({ type: "box", shape: [10000], dtype: "float32" })).toBe("none");
    expect(observationMode({ type: "dict", spaces: { a: { type: "box", shape: [3] }, b: { type: "discrete", n: 2 } } })).toBe("full");
    expect(observationMode(null)).toBe("none");
  });
});

describe("labelledObservation", () => {
  it("names the parts of the flat observation in order", () => {
    const labels = { pole_angle: [2, 3], cart: [0, 2] };
    expect(labelledObservation([0.1, 0.2, 0.3], labels)).toEqual([
      { name: "cart", values: [0.1, 0.2] },
      { name: "pole_angle", values: [0.3] },
    ]);
  });
  it("null without labels or observation", () => {
    expect(labelledObservation([1], null)).toBeNull();
    expect(labelledObservation(null, { a: [0, 1] })).toBeNull();
  });
});

describe("randomSeed", () => {
  it("is a non-negative 31-bit integer", () => {
    expect(randomSeed(() => 0)).toBe(0);
    expect(randomSeed(() => 1 - 2 ** -40)).toBe(2 ** 31 - 1);
    expect(Number.isInteger(randomSeed())).toBe(true);
  });
});
