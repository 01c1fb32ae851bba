import { describe, expect, it } from "vitest";
import { families, familyOf, filterEntries } from "./catalog";

const ENTRIES = [
  { id: "cartpole", gymnasium_id: "CartPole-v1", description: "Balance a pole", family: "Classic control" },
  { id: "pong", description: "Atari Pong", family: "Atari" },
  { id: "breakout", description: "Atari Breakout", family: "Atari" },
  { id: "levels", description: "Three dials" },
];

describe("catalog", () => {
  it("lists families in order, unnamed ones as Custom", () => {
    expect(families(ENTRIES)).toEqual(["Classic control", "Atari", "Custom"]);
    expect(familyOf(ENTRIES[3])).toBe("Custom");
  });
  it("searches ids, Gymnasium ids and descriptions, every word, any case", () => {
    expect(filterEntries(ENTRIES, "pole", null).map((e) => e.id)).toEqual(["cartpole"]);
    expect(filterEntries(ENTRIES, "CartPole-v1", null).map((e) => e.id)).toEqual(["cartpole"]);
    expect(filterEntries(ENTRIES, "atari out", null).map((e) => e.id)).toEqual(["breakout"]);
    expect(filterEntries(ENTRIES, "", null)).toHaveLength(4);
  });
  it("filters by family", () => {
    expect(filterEntries(ENTRIES, "", "Atari").map((e) => e.id)).toEqual(["pong", "breakout"]);
    expect(filterEntries(ENTRIES, "pong", "Custom")).toEqual([]);
  });
});
