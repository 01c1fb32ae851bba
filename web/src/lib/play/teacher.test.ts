import { describe, expect, it } from "vitest";
import { fitAction, teacherAction } from "./teacher";

const STEPS_SPACE = { type: "multi_discrete", nvec: [5, 5, 5, 2] };
const BOX_SPACE = { type: "box", shape: [4], dtype: "float32", low: [-1, -1, -1, 0], high: [1, 1, 1, 1] };

describe("teacherAction", () => {
  it("a hand_steps suggestion: 4 levels inside the space", () => {
    expect(teacherAction({ teacher_action: [2, 4, 0, 1], is_success: false }, STEPS_SPACE)).toEqual([2, 4, 0, 1]);
  });

  it("a hand suggestion: 4 numbers inside the Box", () => {
    expect(teacherAction({ teacher_action: [0.5, -1, 0, 1] }, BOX_SPACE)).toEqual([0.5, -1, 0, 1]);
  });

  it("none without teacher_action or without info", () => {
    expect(teacherAction({ is_success: false }, STEPS_SPACE)).toBeNull();
    expect(teacherAction(null, STEPS_SPACE)).toBeNull();
    expect(teacherAction({ teacher_action: null }, STEPS_SPACE)).toBeNull();
  });

  it("none when the suggestion does not fit the action space", () => {
    expect(teacherAction({ teacher_action: [2, 4, 0] }, STEPS_SPACE)).toBeNull(); // too short
    expect(teacherAction({ teacher_action: [2, 5, 0, 1] }, STEPS_SPACE)).toBeNull(); // level 5 of 5
    expect(teacherAction({ teacher_action: [2, 1.5, 0, 1] }, STEPS_SPACE)).toBeNull(); // a fraction
    expect(teacherAction({ teacher_action: "left" }, STEPS_SPACE)).toBeNull();
    expect(teacherAction({ teacher_action: [0, 0, 2, 1] }, BOX_SPACE)).toBeNull(); // outside the Box
    expect(teacherAction({ teacher_action: [0, 0, 0, 1] }, null)).toBeNull();
  });
});

describe("fitAction", () => {
  it("Discrete with its start, MultiBinary, scalar and shaped Boxes", () => {
    expect(fitAction(2, { type: "discrete", n: 3, start: 1 })).toBe(2);
    expect(fitAction(0, { type: "discrete", n: 3, start: 1 })).toBeNull();
    expect(fitAction([1, 0, 1], { type: "multi_binary", shape: [3] })).toEqual([1, 0, 1]);
    expect(fitAction([1, 2, 1], { type: "multi_binary", shape: [3] })).toBeNull();
    expect(fitAction(0.3, { type: "box", shape: [], low: -1, high: 1 })).toBe(0.3);
    expect(fitAction([[1], [2]], { type: "box", shape: [2, 1], low: "-inf", high: "inf" })).toEqual([[1], [2]]);
    expect(fitAction([1, 2], { type: "box", shape: [2], dtype: "int64", low: 0, high: 3 })).toEqual([1, 2]);
    expect(fitAction([1.5, 2], { type: "box", shape: [2], dtype: "int64", low: 0, high: 3 })).toBeNull();
  });
});
