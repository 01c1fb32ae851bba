import { describe, expect, it } from "vitest";
import { changeGroups } from "./changeGroups";

describe("changeGroups", () => {
  it("groups the timeline by step, in order, in words", () => {
    const timeline = [
      { at: 4200, change: "mass", body: "hand", scale: 1.0 },
      { at: 2200, change: "mass", body: "hand", scale: 2.0 },
      { at: 2200, change: "friction", geom: "floor", scale: 0.5 },
      { change: "mass" }, "not an entry",
    ];
    expect(changeGroups(timeline)).toEqual([
      { at: 2200, label: 'mass (body="hand", scale=2); friction (geom="floor", scale=0.5)' },
      { at: 4200, label: 'mass (body="hand", scale=1)' },
    ]);
    expect(changeGroups(null)).toEqual([]);
  });
});
