import { describe, expect, it } from "vitest";
import { chooseControls } from "./controls";
import { doomButtons, doomKeyMap } from "./doomKeys";

const down = (...keys: string[]) => new Set(keys);
const BASIC = ["NOOP", "MOVE_LEFT", "MOVE_RIGHT", "ATTACK"];
const DEFEND = ["NOOP", "TURN_LEFT", "TURN_RIGHT", "ATTACK"];
const E1M1 = ["NOOP", "ATTACK", "USE", "MOVE_RIGHT", "MOVE_LEFT", "MOVE_BACKWARD", "MOVE_FORWARD", "TURN_RIGHT",
  "TURN_LEFT", "SELECT_WEAPON1", "SELECT_WEAPON2", "SELECT_WEAPON3", "SELECT_WEAPON4", "SELECT_WEAPON5",
  "SELECT_WEAPON6", "SELECT_WEAPON7", "SELECT_NEXT_WEAPON", "SELECT_PREV_WEAPON"];
const FULL = ["MOVE_FORWARD+TURN_LEFT+ATTACK", "MOVE_FORWARD+TURN_LEFT", "MOVE_FORWARD+TURN_RIGHT+ATTACK",
  "MOVE_FORWARD+TURN_RIGHT", "MOVE_FORWARD+ATTACK", "MOVE_FORWARD", "MOVE_BACKWARD+TURN_LEFT+ATTACK",
  "MOVE_BACKWARD+TURN_LEFT", "MOVE_BACKWARD+TURN_RIGHT+ATTACK", "MOVE_BACKWARD+TURN_RIGHT", "MOVE_BACKWARD+ATTACK",
  "MOVE_BACKWARD", "TURN_LEFT+ATTACK", "TURN_LEFT", "TURN_RIGHT+ATTACK", "TURN_RIGHT", "ATTACK", "NOOP", "USE",
  "MOVE_LEFT", "MOVE_RIGHT", "SELECT_NEXT_WEAPON", "SELECT_PREV_WEAPON"];

describe("doomButtons", () => {
  it("splits ViZDoom button names joined by +", () => {
    expect(doomButtons("MOVE_FORWARD+TURN_LEFT+ATTACK")).toEqual(["MOVE_FORWARD", "TURN_LEFT", "ATTACK"]);
    expect(doomButtons("NOOP")).toEqual([]);
    expect(doomButtons("SELECT_WEAPON3")).toEqual(["SELECT_WEAPON3"]);
  });
  it("refuses other names", () => {
    expect(doomButtons("UPFIRE")).toBeNull();
    expect(doomButtons("MOVE_FORWARD+jump")).toBeNull();
  });
});

describe("doomKeyMap", () => {
  it("is only for Doom's menus", () => {
    expect(doomKeyMap(6, ["NOOP", "FIRE", "RIGHT", "LEFT", "RIGHTFIRE", "LEFTFIRE"])).toBeNull();
    expect(doomKeyMap(2, null)).toBeNull();
    expect(doomKeyMap(3, BASIC)).toBeNull(); // names that do not fit the space
  });
  it("turns with the arrows and fires with Space where the scenario turns", () => {
    const map = doomKeyMap(4, DEFEND)!;
    expect(map.actionFor(down(), 0)).toBe(0);
    expect(DEFEND[map.actionFor(down("ArrowLeft"), 0)]).toBe("TURN_LEFT");
    expect(DEFEND[map.actionFor(down("ArrowRight"), 0)]).toBe("TURN_RIGHT");
    expect(DEFEND[map.actionFor(down("Space"), 0)]).toBe("ATTACK");
    expect(DEFEND[map.actionFor(down("ArrowLeft", "Space"), 0)]).toBe("ATTACK"); // no combination: firing wins
    expect(map.idleLabel).toBe("NOOP");
  });
  it("strafes with the arrows (and Q/E) on basic, which cannot turn", () => {
    const map = doomKeyMap(4, BASIC)!;
    expect(BASIC[map.actionFor(down("ArrowLeft"), 0)]).toBe("MOVE_LEFT");
    expect(BASIC[map.actionFor(down("e"), 0)]).toBe("MOVE_RIGHT");
    expect(BASIC[map.actionFor(down("E"), 0)]).toBe("MOVE_RIGHT"); // with Shift or Caps Lock
  });
  it("has F for use, Q/E strafe and Z/X weapons on a whole level", () => {
    const map = doomKeyMap(E1M1.length, E1M1)!;
    const name = (...keys: string[]) => E1M1[map.actionFor(down(...keys), 0)];
    expect(name("ArrowUp")).toBe("MOVE_FORWARD");
    expect(name("ArrowDown")).toBe("MOVE_BACKWARD");
    expect(name("ArrowLeft")).toBe("TURN_LEFT");
    expect(name("f")).toBe("USE");
    expect(name("q")).toBe("MOVE_LEFT");
    expect(name("e")).toBe("MOVE_RIGHT");
    expect(name("z")).toBe("SELECT_PREV_WEAPON");
    expect(name("x")).toBe("SELECT_NEXT_WEAPON");
    expect(name("0")).toBe("SELECT_WEAPON1"); // digits choose by number (0 is the tenth), as everywhere
    expect(map.keys.has("f") && map.keys.has("F") && map.keys.has("Space")).toBe(true);
  });
  it("combines held keys into the full action set's combinations", () => {
    const map = doomKeyMap(23, FULL, 0)!;
    const name = (...keys: string[]) => FULL[map.actionFor(down(...keys), 0)];
    expect(name("ArrowUp", "ArrowLeft", "Space")).toBe("MOVE_FORWARD+TURN_LEFT+ATTACK");
    expect(name("ArrowDown", "ArrowRight")).toBe("MOVE_BACKWARD+TURN_RIGHT");
    expect(name("ArrowUp")).toBe("MOVE_FORWARD");
    expect(name()).toBe("NOOP");
    expect(map.idle).toBe(17);
    expect(name("ArrowUp", "q")).toBe("MOVE_FORWARD"); // no forward+strafe action: the largest match
    expect(map.bindings.find((b) => b.label === "MOVE_FORWARD+TURN_LEFT+ATTACK")?.keys).toEqual(["ArrowUp", "ArrowLeft", "Space"]);
  });
  it("is what the play controls choose for a Doom session", () => {
    const controls = chooseControls({ type: "discrete", n: 4 }, { action_names: DEFEND });
    expect(controls.kind).toBe("keys");
    if (controls.kind === "keys") expect(DEFEND[controls.keyMap.actionFor(down("ArrowLeft"), 0)]).toBe("TURN_LEFT");
  });
});
