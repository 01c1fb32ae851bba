import { describe, expect, it } from "vitest";
import { chooseControls } from "./controls";
import { handOf, PlayKeys } from "./playKeys";

const discrete = chooseControls({ type: "discrete", n: 3 }, { action_names: ["NOOP", "LEFT", "RIGHT"] });
const hand = chooseControls({ type: "multi_discrete", nvec: [5, 5, 5, 2] }, { control: "hand_steps" });
const sliders = chooseControls({ type: "box", shape: [2], low: -1, high: 1, dtype: "float32" });

describe("handOf", () => {
  it("the hand of hand-controlled levels or sliders, else null", () => {
    expect(handOf(hand)).toEqual({ mode: "hand_steps", levels: 5, view: "facing" });
    expect(handOf(discrete)).toBeNull();
    expect(handOf(sliders)).toBeNull();
  });
});

describe("PlayKeys", () => {
  it("a key map's keys are held for the next steps; a tap between two steps still counts once", () => {
    const keys = new PlayKeys(discrete);
    expect(keys.press("ArrowLeft", false)).toBe("held");
    expect(keys.press("ArrowRight", false)).toBe("held");
    expect(keys.release("ArrowRight")).toBe(true);
    expect([...keys.takeForStep()].sort()).toEqual(["ArrowLeft", "ArrowRight"]);
    expect([...keys.takeForStep()]).toEqual(["ArrowLeft"]); // still held
    keys.releaseAll();
    expect([...keys.takeForStep()]).toEqual([]);
  });

  it("keys that are not the session's are the browser's", () => {
    const keys = new PlayKeys(discrete);
    expect(keys.press("q", false)).toBeNull();
    expect(keys.release("q")).toBe(false);
    expect([...keys.takeForStep()]).toEqual([]);
  });

  it("T plays the teacher's suggestion, once per press", () => {
    const keys = new PlayKeys(hand);
    expect(keys.press("t", false)).toBe("play-teacher");
    expect(keys.press("T", false)).toBe("play-teacher");
    expect(keys.press("t", true)).toBeNull();
    expect([...keys.takeForStep()]).toEqual([]);
  });

  it("Space toggles a hand's gripper, once per press, and is never held", () => {
    const keys = new PlayKeys(hand);
    expect(keys.press(" ", false)).toBe("toggle-gripper");
    expect(keys.press(" ", true)).toBe("repeat");
    expect([...keys.takeForStep()]).toEqual([]);
  });

  it("hand keys by the hand's names (W with Shift is w)", () => {
    const keys = new PlayKeys(hand);
    expect(keys.press("W", false)).toBe("held");
    expect(keys.press("Shift", false)).toBe("held");
    expect(keys.release("W")).toBe(true);
    expect([...keys.takeForStep()].sort()).toEqual(["Shift", "w"]);
  });

  it("forgetPressed drops the taps, not the keys held", () => {
    const keys = new PlayKeys(discrete);
    keys.press("ArrowLeft", false);
    keys.press("ArrowRight", false);
    keys.release("ArrowRight");
    keys.forgetPressed();
    expect([...keys.takeForStep()]).toEqual(["ArrowLeft"]);
  });

  it("controls without keys take none", () => {
    const keys = new PlayKeys(sliders);
    expect(keys.press("ArrowLeft", false)).toBeNull();
    expect(keys.press(" ", false)).toBeNull();
    expect(keys.press("t", false)).toBe("play-teacher");
  });
});
