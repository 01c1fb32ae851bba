import { describe, expect, it } from "vitest";
import { directionTokens, discreteKeyMap, keyLabel, keyName } from "./keyMap";

const down = (...keys: string[]) => new Set(keys);
const PONG = ["NOOP", "FIRE", "RIGHT", "LEFT", "RIGHTFIRE", "LEFTFIRE"];
const FULL = ["NOOP", "FIRE", "UP", "RIGHT", "LEFT", "DOWN", "UPRIGHT", "UPLEFT", "DOWNRIGHT", "DOWNLEFT",
  "UPFIRE", "RIGHTFIRE", "LEFTFIRE", "DOWNFIRE", "UPRIGHTFIRE", "UPLEFTFIRE", "DOWNRIGHTFIRE", "DOWNLEFTFIRE"];

describe("directionTokens", () => {
  it("splits Atari names into direction words", () => {
    expect(directionTokens("UPRIGHTFIRE")).toEqual(["UP", "RIGHT", "FIRE"]);
    expect(directionTokens("NOOP")).toEqual([]);
    expect(directionTokens("down_left")).toEqual(["DOWN", "LEFT"]);
  });
  it("refuses other names", () => {
    expect(directionTokens("bthigh")).toBeNull();
    expect(directionTokens("LEFTLEFT")).toBeNull();
  });
});

describe("discreteKeyMap with Atari names", () => {
  it("maps Pong's arrows and Space, combined, and no key to NOOP", () => {
    const map = discreteKeyMap(6, PONG);
    expect(map.actionFor(down(), 0)).toBe(0);
    expect(map.actionFor(down("Space"), 0)).toBe(1);
    expect(map.actionFor(down("ArrowRight"), 0)).toBe(2);
    expect(map.actionFor(down("ArrowLeft"), 0)).toBe(3);
    expect(map.actionFor(down("ArrowRight", "Space"), 0)).toBe(4);
    expect(map.actionFor(down("ArrowLeft", "Space"), 0)).toBe(5);
    expect(map.idleLabel).toBe("NOOP");
  });
  it("moves Pong's paddle with the up and down arrows too (RIGHT is up, LEFT down)", () => {
    const map = discreteKeyMap(6, PONG);
    expect(PONG[map.actionFor(down("ArrowUp"), 0)]).toBe("RIGHT");
    expect(PONG[map.actionFor(down("ArrowDown"), 0)]).toBe("LEFT");
    expect(PONG[map.actionFor(down("ArrowUp", "Space"), 0)]).toBe("RIGHTFIRE");
    expect(PONG[map.actionFor(down("ArrowDown", "Space"), 0)]).toBe("LEFTFIRE");
    expect(map.keys.has("ArrowUp") && map.keys.has("ArrowDown")).toBe(true);
    expect(map.bindings.filter((b) => b.label === "RIGHT").map((b) => b.keys)).toEqual([["ArrowRight"], ["ArrowUp"], ["3"]]);
  });
  it("keeps the up and down arrows for UP and DOWN in games that have them", () => {
    const map = discreteKeyMap(18, FULL);
    expect(FULL[map.actionFor(down("ArrowUp"), 0)]).toBe("UP");
    expect(FULL[map.actionFor(down("ArrowDown"), 0)]).toBe("DOWN");
  });
  it("combines three keys in the full action set and falls back to the largest match", () => {
    const map = discreteKeyMap(18, FULL);
    expect(FULL[map.actionFor(down("ArrowUp", "ArrowRight", "Space"), 0)]).toBe("UPRIGHTFIRE");
    expect(FULL[map.actionFor(down("ArrowDown", "ArrowLeft"), 0)]).toBe("DOWNLEFT");
    const pong = discreteKeyMap(6, PONG);
    expect(PONG[pong.actionFor(down("ArrowUp", "ArrowRight", "Space"), 0)]).toBe("RIGHTFIRE");
  });
  it("lists one binding per action with its keys", () => {
    const map = discreteKeyMap(6, PONG);
    const right = map.bindings.find((b) => b.label === "RIGHTFIRE");
    expect(right?.keys).toEqual(["ArrowRight", "Space"]);
  });
});

describe("discreteKeyMap without names", () => {
  it("two actions: left and right, the last one goes on", () => {
    const map = discreteKeyMap(2);
    expect(map.actionFor(down("ArrowLeft"), 1)).toBe(0);
    expect(map.actionFor(down("ArrowRight"), 0)).toBe(1);
    expect(map.actionFor(down(), 1)).toBe(1);
    expect(map.actionFor(down(), 0)).toBe(0);
    expect(map.idle).toBe("last");
  });
  it("three actions: negative, none, positive", () => {
    const map = discreteKeyMap(3);
    expect(map.actionFor(down(), 0)).toBe(1);
    expect(map.actionFor(down("ArrowLeft"), 1)).toBe(0);
    expect(map.actionFor(down("ArrowRight"), 1)).toBe(2);
  });
  it("more actions: digits choose by number", () => {
    const map = discreteKeyMap(4);
    expect(map.actionFor(down("3"), 0)).toBe(2);
    expect(map.actionFor(down(), 2)).toBe(0);
    expect(map.bindings.map((b) => b.keys[0])).toEqual(["1", "2", "3", "4"]);
  });
  it("names that are not directions get digits, and start shifts the actions", () => {
    const map = discreteKeyMap(3, ["jump", "duck", "wait"], 5);
    expect(map.actionFor(down("2"), 5)).toBe(6);
    expect(map.bindings[1].label).toBe("duck");
  });
});

describe("key names", () => {
  it("names Space and draws arrows", () => {
    expect(keyName(" ")).toBe("Space");
    expect(keyName("ArrowUp")).toBe("ArrowUp");
    expect(keyLabel("ArrowLeft")).toBe("←");
    expect(keyLabel("7")).toBe("7");
    expect(keyLabel("f")).toBe("F"); // Doom's use key
  });
});
