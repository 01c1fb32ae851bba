import { describe, expect, it } from "vitest";
import { actionOf, chooseControls, initialValues } from "./controls";
import {
  gripperClosed, gripperToggled, handAction, handBindings, handControlOf, handInitialValues, handKeyName, heldDirection, moveValue,
} from "./handKeys";

const STEPS_SPACE = { type: "multi_discrete", nvec: [5, 5, 5, 2], start: [0, 0, 0, 0] };
const BOX_SPACE = { type: "box", shape: [4], dtype: "float32", low: [-1, -1, -1, 0], high: [1, 1, 1, 1] };
const NAMES = ["hand_x", "hand_y", "hand_z", "gripper"];
const STEPS = { mode: "hand_steps" as const, levels: 5, view: "facing" as const };
const BOX = { mode: "hand" as const, levels: 0, view: "facing" as const };

describe("handControlOf", () => {
  it("hand_steps: MultiDiscrete([L, L, L, 2]) with metadata.control hand_steps", () => {
    expect(handControlOf(STEPS_SPACE, { control: "hand_steps", action_names: NAMES })).toEqual(STEPS);
    expect(handControlOf({ type: "multi_discrete", nvec: [3, 3, 3, 2] }, { control: "hand_steps" })).toEqual({ mode: "hand_steps", levels: 3, view: "facing" });
  });

  it("hand: a Box of 4 with metadata.control hand", () => {
    expect(handControlOf(BOX_SPACE, { control: "hand" })).toEqual(BOX);
  });

  it("none for joint control, other spaces or levels that do not fit", () => {
    expect(handControlOf(STEPS_SPACE, { control: "joints" })).toBeNull();
    expect(handControlOf(STEPS_SPACE, undefined)).toBeNull();
    expect(handControlOf({ type: "multi_discrete", nvec: [4, 4, 4, 2] }, { control: "hand_steps" })).toBeNull();
    expect(handControlOf({ type: "multi_discrete", nvec: [5, 5, 5] }, { control: "hand_steps" })).toBeNull();
    expect(handControlOf({ type: "multi_discrete", nvec: [5, 5, 5, 2], start: [1, 1, 1, 0] }, { control: "hand_steps" })).toBeNull();
    expect(handControlOf({ type: "box", shape: [8] }, { control: "hand" })).toBeNull();
    expect(handControlOf(null, { control: "hand" })).toBeNull();
  });
});

describe("hand keys to a MultiDiscrete action", () => {
  const stay = handInitialValues(STEPS);

  it("no key: the middle level on every axis (stay), the gripper open", () => {
    expect(stay).toEqual([2, 2, 2, 0]);
    expect(handAction(STEPS, stay, new Set())).toEqual([2, 2, 2, 0]);
  });

  it("arrows move across the table (x, y), W and S up and down (z), to the outermost level", () => {
    expect(handAction(STEPS, stay, new Set(["ArrowUp"]))).toEqual([0, 2, 2, 0]);
    expect(handAction(STEPS, stay, new Set(["ArrowDown"]))).toEqual([4, 2, 2, 0]);
    expect(handAction(STEPS, stay, new Set(["ArrowLeft"]))).toEqual([2, 0, 2, 0]);
    expect(handAction(STEPS, stay, new Set(["ArrowRight"]))).toEqual([2, 4, 2, 0]);
    expect(handAction(STEPS, stay, new Set(["w"]))).toEqual([2, 2, 4, 0]);
    expect(handAction(STEPS, stay, new Set(["s"]))).toEqual([2, 2, 0, 0]);
  });

  it("keys on several axes combine; opposite keys on one axis cancel", () => {
    expect(handAction(STEPS, stay, new Set(["ArrowUp", "ArrowRight", "w"]))).toEqual([0, 4, 4, 0]);
    expect(heldDirection(STEPS, new Set(["ArrowLeft", "ArrowRight"]), 1)).toBe(0);
    expect(handAction(STEPS, stay, new Set(["ArrowLeft", "ArrowRight"]))).toEqual([2, 2, 2, 0]);
  });

  it("Shift makes the move the level next to the middle", () => {
    expect(handAction(STEPS, stay, new Set(["ArrowRight", "Shift"]))).toEqual([2, 3, 2, 0]);
    expect(handAction(STEPS, stay, new Set(["s", "Shift"]))).toEqual([2, 2, 1, 0]);
    expect(moveValue({ ...STEPS, levels: 3 }, 1, true)).toBe(2);
  });

  it("the gripper's held state goes with every move; axes without a key hold their level", () => {
    expect(handAction(STEPS, [2, 2, 2, 1], new Set(["w"]))).toEqual([2, 2, 4, 1]);
    expect(handAction(STEPS, [3, 2, 2, 0], new Set(["w"]))).toEqual([3, 2, 4, 0]);
  });

  it("Space toggles the gripper between open (0) and closed (1)", () => {
    expect(gripperToggled(STEPS, 0)).toBe(1);
    expect(gripperToggled(STEPS, 1)).toBe(0);
    expect(gripperClosed(STEPS, 1)).toBe(true);
  });

  it("the controls of a hand_steps session: level rows starting at stay, keys over them", () => {
    const controls = chooseControls(STEPS_SPACE, { control: "hand_steps", action_names: NAMES });
    if (controls.kind !== "levels") throw new Error(controls.kind);
    expect(controls.hand).toEqual(STEPS);
    expect(controls.rows.map((r) => r.name)).toEqual(NAMES);
    const values = initialValues(controls);
    expect(values).toEqual([2, 2, 2, 0]);
    expect(actionOf(controls, values, new Set())).toEqual([2, 2, 2, 0]);
    expect(actionOf(controls, values, new Set(["ArrowDown"]))).toEqual([4, 2, 2, 0]);
  });

  it("a MultiDiscrete without hand control still starts at level 0 and ignores the keys", () => {
    const controls = chooseControls(STEPS_SPACE, { action_names: NAMES });
    if (controls.kind !== "levels") throw new Error(controls.kind);
    expect(controls.hand).toBeNull();
    expect(actionOf(controls, initialValues(controls), new Set(["ArrowDown"]))).toEqual([0, 0, 0, 0]);
  });
});

describe("hand keys to a Box action", () => {
  it("x, y, z in units of hand_step: 1 for a move, 0.5 with Shift, 0 to stay", () => {
    const stay = handInitialValues(BOX);
    expect(handAction(BOX, stay, new Set())).toEqual([0, 0, 0, 0]);
    expect(handAction(BOX, stay, new Set(["ArrowUp", "ArrowLeft", "w"]))).toEqual([-1, -1, 1, 0]);
    expect(handAction(BOX, stay, new Set(["ArrowDown", "Shift"]))).toEqual([0.5, 0, 0, 0]);
  });

  it("the gripper closes at 0.5 and above; toggling gives 1 or 0", () => {
    expect(gripperClosed(BOX, 0.7)).toBe(true);
    expect(gripperClosed(BOX, 0.2)).toBe(false);
    expect(gripperToggled(BOX, 0.7)).toBe(0);
    expect(gripperToggled(BOX, 0)).toBe(1);
  });

  it("the controls of a hand session: sliders at stay, the keys over them", () => {
    const controls = chooseControls(BOX_SPACE, { control: "hand", action_names: NAMES });
    if (controls.kind !== "sliders") throw new Error(controls.kind);
    const values = initialValues(controls);
    expect(values).toEqual([0, 0, 0, 0]);
    expect(actionOf(controls, [0.25, 0, 0, 1], new Set(["s"]))).toEqual([0.25, 0, -1, 1]);
  });
});

describe("the arrows follow the session's camera", () => {
  const stay = handInitialValues(STEPS);

  it("overview and front face the arm: ↑ is -x, → is +y", () => {
    for (const camera of [undefined, "overview", "front", -1]) {
      const hand = handControlOf(STEPS_SPACE, { control: "hand_steps" }, camera)!;
      expect(hand.view).toBe("facing");
      expect(handAction(hand, stay, new Set(["ArrowUp", "ArrowRight"]))).toEqual([0, 4, 2, 0]);
    }
  });

  it("side looks along +y: → is +x, ↑ is +y", () => {
    const hand = handControlOf(STEPS_SPACE, { control: "hand_steps" }, "side")!;
    expect(handAction(hand, stay, new Set(["ArrowRight"]))).toEqual([4, 2, 2, 0]);
    expect(handAction(hand, stay, new Set(["ArrowUp"]))).toEqual([2, 4, 2, 0]);
  });

  it("top looks down, +x up the picture: ↑ is +x, ← is +y; W and S stay up and down", () => {
    const hand = handControlOf(STEPS_SPACE, { control: "hand_steps" }, "top")!;
    expect(handAction(hand, stay, new Set(["ArrowUp"]))).toEqual([4, 2, 2, 0]);
    expect(handAction(hand, stay, new Set(["ArrowLeft"]))).toEqual([2, 4, 2, 0]);
    expect(handAction(hand, stay, new Set(["w"]))).toEqual([2, 2, 4, 0]);
    expect(handBindings("top").map((b) => [b.key, b.axis, b.sign])).toEqual([
      ["ArrowUp", 0, 1], ["ArrowDown", 0, -1], ["ArrowLeft", 1, 1], ["ArrowRight", 1, -1], ["w", 2, 1], ["s", 2, -1],
    ]);
  });

  it("the controls take the camera", () => {
    const controls = chooseControls(STEPS_SPACE, { control: "hand_steps" }, "side");
    expect(actionOf(controls, initialValues(controls), new Set(["ArrowLeft"]))).toEqual([0, 2, 2, 0]);
  });
});

describe("handKeyName", () => {
  it("letters in lower case (W with Shift is w), Space by name", () => {
    expect(handKeyName("W")).toBe("w");
    expect(handKeyName(" ")).toBe("Space");
    expect(handKeyName("ArrowUp")).toBe("ArrowUp");
  });
});
