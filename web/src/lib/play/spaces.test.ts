import { describe, expect, it } from "vitest";
import { asSpace, boundValues, elementCount, flatten, isImageSpace, reshape, toNumber } from "./spaces";

describe("spaces", () => {
  it("reshapes flat values and flattens them back", () => {
    expect(reshape([1, 2, 3, 4, 5, 6], [2, 3])).toEqual([[1, 2, 3], [4, 5, 6]]);
    expect(reshape([7], [])).toBe(7);
    expect(flatten([[1, 2], [3, true]])).toEqual([1, 2, 3, 1]);
  });
  it("reads bounds: one for all, lists, non-finite strings", () => {
    expect(boundValues(1, 3, 0)).toEqual([1, 1, 1]);
    expect(boundValues(["-inf", 2], 2, 0)).toEqual([-Infinity, 2]);
    expect(boundValues(undefined, 2, 5)).toEqual([5, 5]);
    expect(toNumber("nan")).toBeNaN();
  });
  it("knows pictures and counts elements", () => {
    expect(isImageSpace({ type: "box", shape: [64, 64, 3], dtype: "uint8" })).toBe(true);
    expect(isImageSpace({ type: "box", shape: [3], dtype: "uint8" })).toBe(false);
    expect(elementCount({ type: "tuple", spaces: [{ type: "discrete", n: 2 }, { type: "multi_discrete", nvec: [2, 2] }] })).toBe(3);
    expect(asSpace({ type: "discrete" })?.type).toBe("discrete");
    expect(asSpace(null)).toBeNull();
  });
});
