import { describe, expect, it } from "vitest";
import { episodePlots, plotArrayNames, valueAtStep } from "./plotData";

const arr = (data: unknown, shape: number[], dtype = "<f8") => ({ data, shape, dtype });

describe("plot data", () => {
  it("plots reward, every agent value and is_success per step with gaps for NaN, never frames", () => {
    const names = ["observations", "actions", "rewards", "frames", "agent.confidence", "agent.probs", "info.is_success", "seq"];
    expect(plotArrayNames(names)).toEqual(["rewards", "agent.confidence", "agent.probs", "info.is_success"]);
    const plots = episodePlots(
      {
        rewards: arr([1, "nan", 0.5], [3]),
        "agent.confidence": arr([0.9, "nan", 0.7], [3]),
        "agent.probs": arr([[0.1, 0.9], [0.2, 0.8], ["nan", "nan"]], [3, 2]),
        "info.is_success": arr([0, 0, 1], [3]),
      },
      3,
    );
    expect(plots.x).toEqual([1, 2, 3]);
    expect(plots.plots.map((p) => p.id)).toEqual(["reward", "agent.confidence", "agent.probs", "is_success"]);
    expect(plots.plots[0].series[0].values).toEqual([1, null, 0.5]);
    expect(plots.plots[1].series[0].values).toEqual([0.9, null, 0.7]);
    expect(plots.plots[2].series.map((s) => s.label)).toEqual(["probs[0]", "probs[1]"]);
    expect(plots.plots[2].series[1].values).toEqual([0.9, 0.8, null]);
    expect(plots.plots[3].stepped).toBe(true);
    expect(valueAtStep(plots.plots[0].series[0], 3)).toBe(0.5);
    expect(valueAtStep(plots.plots[0].series[0], 0)).toBeNull();
  });

  it("gives infinite values as gaps and pads short arrays", () => {
    const plots = episodePlots({ rewards: arr(["inf", 2], [2]) }, 3);
    expect(plots.plots[0].series[0].values).toEqual([null, 2, null]);
  });
});
