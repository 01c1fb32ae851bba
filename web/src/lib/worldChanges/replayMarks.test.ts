import { describe, expect, it } from "vitest";
import { stepsBeforeEpisode, worldChangeMarks } from "./replayMarks";

describe("world changes", () => {
  const episodes = [{ index: 0, length: 100 }, { index: 1, length: 50 }, { index: 2, length: 80 }];

  it("places a change given by its at within the episode", () => {
    expect(stepsBeforeEpisode(episodes, 2, undefined)).toBe(150);
    expect(stepsBeforeEpisode([{ index: 4, life_start: 1200 }], 4, 1000)).toBe(200);
    const changes = [
      { at: 160, change: "mass", body: "hand", scale: 2 },
      { at: 20, change: "friction" },
      { at: 300, change: "mass" },
      { change: "nothing" },
    ];
    expect(worldChangeMarks(changes, 150, 80)).toEqual([{ step: 10, label: 'mass (body="hand", scale=2)', sessionStep: 160 }]);
    expect(worldChangeMarks(changes, 0, 100).map((m) => m.step)).toEqual([20]);
    expect(worldChangeMarks(undefined, 0, 10)).toEqual([]);
  });

  it("places an applied change at the steps taken before its event, in its own episode only", () => {
    const applied = [
      // applied by step 4 of episode 1: after its 3 steps
      { at: 103, change: "mass", body: "hand", scale: 2, index: 0, session_step: 103, seq: 105, episode: 1, episode_step: 4 },
      // met at episode 1's reset
      { at: 100, change: "sensor_noise", std: 0.1, index: 1, session_step: 100, seq: 101, episode: 1, episode_step: 0 },
      { at: 40, change: "friction", scale: 0.5, index: 2, session_step: 40, seq: 41, episode: 0, episode_step: 41 },
    ];
    expect(worldChangeMarks(applied, 100, 50, 1)).toEqual([
      { step: 0, label: "sensor_noise (std=0.1)", sessionStep: 100 },
      { step: 3, label: 'mass (body="hand", scale=2)', sessionStep: 103 },
    ]);
    expect(worldChangeMarks(applied, 0, 100, 0)).toEqual([{ step: 40, label: "friction (scale=0.5)", sessionStep: 40 }]);
    // where the recorder's episode says, whatever `at` would say
    expect(worldChangeMarks(applied, 0, 100, 2)).toEqual([]);
  });
});
