import { describe, expect, it } from "vitest";
import { stepsBeforeEpisode, worldChangeMarks } from "./worldChanges";

describe("world changes", () => {
  const episodes = [{ index: 0, length: 100 }, { index: 1, length: 50 }, { index: 2, length: 80 }];

  it("places each change at its step within the episode", () => {
    expect(stepsBeforeEpisode(episodes, 2, undefined)).toBe(150);
    expect(stepsBeforeEpisode([{ index: 4, life_start: 1200 }], 4, 1000)).toBe(200);
    const changes = [
      { at: 160, change: "mass", body: "hand", scale: 2 },
      { at: 20, change: "friction" },
      { at: 300, change: "mass" },
      { change: "nothing" },
    ];
    expect(worldChangeMarks(changes, 150, 80)).toEqual([{ step: 10, label: 'mass (body="hand", scale=2)' }]);
    expect(worldChangeMarks(changes, 0, 100).map((m) => m.step)).toEqual([20]);
    expect(worldChangeMarks(undefined, 0, 10)).toEqual([]);
  });
});
