import { describe, expect, it } from "vitest";
import { detailArrayNames, stepDetails, teacherPlot } from "./stepDetails";

const arr = (data: unknown, shape: number[], dtype = "<f8") => ({ data, shape, dtype });
const SPACE = { type: "multi_discrete", nvec: [5, 5, 5, 2] };
const STEPS = { length: 3, resetRow: true };

// Three steps: the state rows 0..3 (reset first); the teacher suggested at steps 1 and 3 (rows
// 0 and 2) and the first action followed it; row 1 has no suggestion.
const ARRAYS = {
  "state.hand_position": arr([[0.5, 0, 0.6], [0.52, 0, 0.6], [0.54, 0, 0.6], [0.56, 0, 0.6]], [4, 3]),
  "state.gripper": arr([[0], [0], [0.5], [1]], [4, 1]),
  actions: arr([[4, 2, 2, 0], [4, 2, 2, 0], [2, 2, 2, 1]], [3, 4], "<i8"),
  "teacher.action": arr([[4, 2, 2, 0], [0, 0, 0, 0], [2, 2, 0, 1]], [3, 4], "<i8"),
  "teacher.valid": arr([true, false, true], [3], "|b1"),
};

describe("detailArrayNames", () => {
  it("the state parts, and with the teacher's suggestions the actions to compare them with", () => {
    const names = ["observations", "actions", "rewards", "state.b", "state.a", "teacher.action", "teacher.valid", "info.is_success"];
    expect(detailArrayNames(names)).toEqual(["state.a", "state.b", "teacher.valid", "teacher.action", "actions"]);
    expect(detailArrayNames(["observations", "actions", "state.x"])).toEqual(["state.x"]);
  });
});

describe("stepDetails", () => {
  it("the true values of the frame's row and the action that followed it with the teacher's suggestion", () => {
    expect(stepDetails(ARRAYS, STEPS, 0, SPACE)).toEqual({
      state: [{ name: "gripper", values: [0] }, { name: "hand_position", values: [0.5, 0, 0.6] }],
      next: { step: 1, taken: [4, 2, 2, 0], suggested: [4, 2, 2, 0] },
      hasTeacher: true,
    });
    expect(stepDetails(ARRAYS, STEPS, 1, SPACE).next).toEqual({ step: 2, taken: [4, 2, 2, 0], suggested: null });
    expect(stepDetails(ARRAYS, STEPS, 2, SPACE).next).toEqual({ step: 3, taken: [2, 2, 2, 1], suggested: [2, 2, 0, 1] });
  });

  it("no next action at the last step; the last row's state", () => {
    const last = stepDetails(ARRAYS, STEPS, 3, SPACE);
    expect(last.next).toBeNull();
    expect(last.state[1]).toEqual({ name: "hand_position", values: [0.56, 0, 0.6] });
  });

  it("a file without the reset's row: step k is row k - 1", () => {
    expect(stepDetails(ARRAYS, { length: 4, resetRow: false }, 1, SPACE).state[1].values).toEqual([0.5, 0, 0.6]);
  });

  it("without the teacher's arrays: the state alone", () => {
    const details = stepDetails({ "state.x": arr([[1], [2]], [2, 1]) }, { length: 1, resetRow: true }, 1, SPACE);
    expect(details).toEqual({ state: [{ name: "x", values: [2] }], next: null, hasTeacher: false });
  });
});

describe("teacherPlot", () => {
  it("1 where the action was the suggestion, 0 where not, a gap without one", () => {
    expect(teacherPlot(ARRAYS, STEPS, SPACE)?.series[0].values).toEqual([1, null, 0]);
    expect(teacherPlot({ actions: ARRAYS.actions }, STEPS, SPACE)).toBeNull();
  });
});
