import { describe, expect, it } from "vitest";
import { actionArrayNames, recordedActions } from "./actions";

const arr = (data: unknown, shape: number[], dtype = "<f8") => ({ data, shape, dtype });

describe("actions", () => {
  it("gives a plain space's rows as they are", () => {
    expect(actionArrayNames(["actions", "rewards", "actions.x", "teacher.action"])).toEqual(["actions", "actions.x"]);
    expect(recordedActions({ actions: arr([0, 1, 1], [3], "<i8") }, { type: "discrete", n: 2 })).toEqual([0, 1, 1]);
    expect(recordedActions({ actions: arr([[0.5, -1], [0.25, 1]], [2, 2]) }, { type: "box" })).toEqual([[0.5, -1], [0.25, 1]]);
  });

  it("rebuilds Dict and Tuple actions from actions.<key> arrays", () => {
    const space = {
      type: "dict",
      spaces: { arm: { type: "dict", spaces: { joints: { type: "box" } } }, grip: { type: "tuple", spaces: [{ type: "discrete" }, { type: "discrete" }] } },
    };
    const arrays = {
      "actions.arm.joints": arr([[1, 2], [3, 4]], [2, 2]),
      "actions.grip.0": arr([0, 1], [2], "<i8"),
      "actions.grip.1": arr([1, 0], [2], "<i8"),
    };
    expect(recordedActions(arrays, space)).toEqual([
      { arm: { joints: [1, 2] }, grip: [0, 1] },
      { arm: { joints: [3, 4] }, grip: [1, 0] },
    ]);
    expect(() => recordedActions({ "actions.a": arr([1], [1]) }, { type: "dict", spaces: { a: {}, b: {} } })).toThrow(/actions.b/);
  });
});
