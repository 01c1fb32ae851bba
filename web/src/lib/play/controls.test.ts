import { describe, expect, it } from "vitest";
import { actionOf, chooseControls, initialValues, valuesOf } from "./controls";

describe("chooseControls", () => {
  it("keys for Discrete, with the key map", () => {
    const controls = chooseControls({ type: "discrete", n: 2, start: 0 });
    expect(controls.kind).toBe("keys");
    expect(actionOf(controls, initialValues(controls), new Set(["ArrowRight"]))).toBe(1);
  });

  it("a named slider per Box element, holding its value, in the Box's shape", () => {
    const space = { type: "box", shape: [2], dtype: "float32", low: [-1, 0], high: [1, 2] };
    const controls = chooseControls(space, { action_names: ["force_x", "force_y"] });
    if (controls.kind !== "sliders") throw new Error(controls.kind);
    expect(controls.sliders.map((s) => [s.name, s.min, s.max, s.initial])).toEqual([["force_x", -1, 1, 0], ["force_y", 0, 2, 0]]);
    expect(controls.sliders[0].step).toBeCloseTo(0.01);
    expect(actionOf(controls, [0.5, 1.25])).toEqual([0.5, 1.25]);
  });

  it("one bound for all elements, infinite bounds and a scalar shape", () => {
    const controls = chooseControls({ type: "box", shape: [], dtype: "float64", low: "-inf", high: "inf" });
    if (controls.kind !== "sliders") throw new Error(controls.kind);
    expect(controls.sliders[0]).toMatchObject({ name: "action", min: -10, max: 10, initial: 0 });
    expect(actionOf(controls, [3])).toBe(3);
  });

  it("names fall back to indices when action_names does not fit", () => {
    const controls = chooseControls({ type: "box", shape: [2, 1], dtype: "float32", low: 1, high: 3 }, { action_names: ["only one"] });
    if (controls.kind !== "sliders") throw new Error(controls.kind);
    expect(controls.sliders.map((s) => s.name)).toEqual(["action[0]", "action[1]"]);
    expect(controls.sliders[0].initial).toBe(2);
    expect(actionOf(controls, [1.5, 2.5])).toEqual([[1.5], [2.5]]);
  });

  it("a row of level buttons per MultiDiscrete choice", () => {
    const controls = chooseControls({ type: "multi_discrete", nvec: [3, 2] }, { action_names: ["speed", "gear"] });
    if (controls.kind !== "levels") throw new Error(controls.kind);
    expect(controls.rows.map((r) => [r.name, r.levels])).toEqual([["speed", [0, 1, 2]], ["gear", [0, 1]]]);
    expect(actionOf(controls, [2, 1])).toEqual([2, 1]);
    expect(valuesOf(controls, [1, 0])).toEqual([1, 0]);
  });

  it("toggles for MultiBinary; none for Dict", () => {
    const toggles = chooseControls({ type: "multi_binary", shape: [3] });
    expect(toggles.kind).toBe("toggles");
    expect(actionOf(toggles, [1, 0, 1])).toEqual([1, 0, 1]);
    const none = chooseControls({ type: "dict", repr: "Dict('a': Discrete(2))", spaces: { a: { type: "discrete", n: 2 } } });
    expect(none.kind).toBe("none");
    expect(chooseControls(null).kind).toBe("none");
  });
});
