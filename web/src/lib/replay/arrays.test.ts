import { describe, expect, it } from "vitest";
import { columnsOf, flatNumbers, toNumber } from "./arrays";

const arr = (data: unknown, shape: number[], dtype = "<f8") => ({ data, shape, dtype });

describe("arrays", () => {
  it("reads non-finite strings and booleans as numbers", () => {
    expect(toNumber("nan")).toBeNaN();
    expect(toNumber("inf")).toBe(Infinity);
    expect(toNumber("-inf")).toBe(-Infinity);
    expect(toNumber(true)).toBe(1);
    expect(toNumber(2.5)).toBe(2.5);
    expect(toNumber(null)).toBeNaN();
    expect(flatNumbers(arr([[1, "nan"], [false, 3]], [2, 2]))).toEqual([1, NaN, 0, 3]);
  });

  it("splits an array of rows into named columns", () => {
    expect(columnsOf("x", arr([1, 2, 3], [3]))).toEqual([{ label: "x", values: [1, 2, 3] }]);
    expect(columnsOf("v", arr([[1, 2], [3, 4]], [2, 2]))).toEqual([
      { label: "v[0]", values: [1, 3] },
      { label: "v[1]", values: [2, 4] },
    ]);
    const cube = columnsOf("m", arr([[[1, 2], [3, 4]]], [1, 2, 2]));
    expect(cube.map((c) => c.label)).toEqual(["m[0,0]", "m[0,1]", "m[1,0]", "m[1,1]"]);
    expect(cube[2].values).toEqual([3]);
    expect(columnsOf("s", arr(5, []))).toEqual([]);
  });
});
