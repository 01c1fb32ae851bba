import { describe, expect, it } from "vitest";
import { agentColor, AGENT_COLORS, comparisonChart, translucent } from "./chart";

const recovery = (at: number, steps: number | null, extra = {}) =>
  ({ at, changes: [], before: -0.3, steps, worst: -0.8, recovered: steps !== null, too_close: false, ...extra });

describe("comparisonChart", () => {
  it("aligns every agent's windows on one x, with gaps where an agent has none", () => {
    const chart = comparisonChart({
      world_changes: [{ at: 300, change: "mass", body: "hand", scale: 2 }],
      kwargs: {},
      agents: [
        { name: "mine", reward_windows: [{ step: 200, mean: -0.3 }, { step: 250, mean: -0.2 }, { step: 300, mean: "nan" }] },
        { name: "base", reward_windows: [{ step: 250, mean: -0.5 }, { step: 350, mean: -0.4 }] },
      ],
    });
    expect(chart.x).toEqual([200, 250, 300, 350]);
    expect(chart.series).toEqual([
      { label: "mine", color: AGENT_COLORS[0], values: [-0.3, -0.2, null, null] },
      { label: "base", color: AGENT_COLORS[1], values: [null, -0.5, null, -0.4] },
    ]);
    expect(chart.changes).toEqual([{ at: 300, label: 'mass (body="hand", scale=2)' }]);
    expect(chart.bands).toEqual([]);
  });

  it("shades each recovery from the change to where it recovered, in the agent's colour", () => {
    const chart = comparisonChart({
      world_changes: null,
      kwargs: { world_changes: [{ at: 2200, change: "mass" }, { at: 4200, change: "mass" }] },
      agents: [
        { name: "a", measures: { recovery: [recovery(2200, 150), recovery(4200, null)] } },
        { name: "b", measures: { recovery: [recovery(2200, 0), recovery(4200, 50, { too_close: true })] } },
        { name: "c", measures: { recovery: [recovery(2200, 400)] } },
      ],
    });
    expect(chart.bands).toEqual([
      { agent: 0, color: translucent(AGENT_COLORS[0], 0.18), from: 2200, to: 2350 },
      { agent: 2, color: translucent(AGENT_COLORS[2], 0.18), from: 2200, to: 2600 },
    ]);
    expect(chart.changes.map((c) => c.at)).toEqual([2200, 4200]);
    expect(chart.x).toEqual([]);
  });
});

describe("colours", () => {
  it("repeats the palette and makes a colour translucent", () => {
    expect(agentColor(AGENT_COLORS.length + 1)).toBe(AGENT_COLORS[1]);
    expect(translucent("#2457d6", 0.25)).toBe("rgba(36, 87, 214, 0.25)");
    expect(translucent("red", 0.5)).toBe("red");
  });
});
