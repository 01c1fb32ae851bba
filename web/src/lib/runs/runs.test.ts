import { describe, expect, it } from "vitest";
import { bandOf, chartOf, curveOf, ema, finalValue, hparamText, interpolate, type RunLike, type SeriesData, tableColumns } from "./runs";

const series = (step: number[], value: number[], t0 = 1000, frames?: (number | null)[]): SeriesData => ({
  step, value, time: step.map((s) => t0 + s * 2), frames: frames ?? step.map((s) => s * 4),
});

const run = (id: string, group: string, seed: number | null, metrics: [string, number][] = [],
             hparams: Record<string, unknown> = {}): RunLike => ({
  id, name: group, group, seed, hparams, metrics: metrics.map(([name, last_value]) => ({ name, last_value, last_step: 9 })),
});

describe("curveOf", () => {
  it("takes steps, frames or seconds since the first point", () => {
    const s = series([0, 10, 20], [1, 2, 3], 500, [0, null, 80]);
    expect(curveOf(s, "step")).toEqual({ x: [0, 10, 20], y: [1, 2, 3] });
    expect(curveOf(s, "frames")).toEqual({ x: [0, 80], y: [1, 3] });
    expect(curveOf(s, "time")).toEqual({ x: [0, 20, 40], y: [1, 2, 3] });
  });
});

describe("ema", () => {
  it("is TensorBoard's debiased moving average", () => {
    expect(ema([1, 2, 3], 0)).toEqual([1, 2, 3]);
    const smoothed = ema([1, 1, 1, 1], 0.9);
    smoothed.forEach((v) => expect(v).toBeCloseTo(1));  // debiased: a constant stays itself
    const s = ema([0, 10], 0.5);
    expect(s[0]).toBeCloseTo(0);
    expect(s[1]).toBeCloseTo((0.5 * 0 + 0.5 * 10) / (1 - 0.5 ** 2));  // debiased by 1 - w^2
  });
  it("smooths a noisy series toward its mean", () => {
    const noisy = Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? 0 : 2));
    const last = ema(noisy, 0.95).slice(100);
    last.forEach((v) => expect(Math.abs(v - 1)).toBeLessThan(0.1));
  });
});

describe("interpolate and bandOf", () => {
  it("interpolates linearly inside the curve only", () => {
    const c = { x: [0, 10], y: [0, 100] };
    expect(interpolate(c, 5)).toBe(50);
    expect(interpolate(c, 10)).toBe(100);
    expect(interpolate(c, 11)).toBeNull();
  });
  it("puts runs of different step grids on their common x", () => {
    const a = { x: [0, 10, 20, 30], y: [0, 10, 20, 30] };
    const b = { x: [0, 15, 30], y: [10, 25, 40] };
    const c = { x: [5, 25], y: [0, 0] };
    const band = bandOf([a, b, c]);
    expect(band.x).toEqual([5, 10, 15, 20, 25]);
    expect(band.min).toEqual([0, 0, 0, 0, 0]);
    expect(band.max).toEqual([15, 20, 25, 30, 35]);
    expect(band.mean[1]).toBeCloseTo((10 + 20 + 0) / 3);
    expect(bandOf([{ x: [0, 1], y: [0, 0] }, { x: [5, 6], y: [0, 0] }]).x).toEqual([]);
  });
  it("keeps at most maxPoints of the grid", () => {
    const a = { x: Array.from({ length: 5000 }, (_, i) => i), y: Array.from({ length: 5000 }, () => 1) };
    const band = bandOf([a, a], 100);
    expect(band.x.length).toBe(100);
    expect(band.x[0]).toBe(0);
    expect(band.x[99]).toBe(4999);
  });
});

describe("chartOf", () => {
  const runs = [run("r1", "ppo", 1), run("r2", "ppo", 2), run("r3", "ppo", 3), run("r4", "dqn", null)];
  const data = new Map<string, SeriesData>([
    ["r1", series([0, 10, 20], [0, 1, 2])],
    ["r2", series([0, 5, 20], [1, 2, 3])],
    ["r3", series([0, 20], [2, 4])],
    ["r4", series([0, 7, 14], [5, 5, 5])],
  ]);
  it("draws a group as its mean and band, a single run as a line", () => {
    const chart = chartOf(runs, data, "step", 0);
    expect(chart.series.map((s) => s.kind)).toEqual(["mean", "min", "max", "line"]);
    expect(chart.bands).toEqual([[2, 1]]);
    expect(chart.legend.map((l) => l.label)).toEqual(["ppo (mean of 3)", "dqn"]);
    expect(chart.x).toEqual([0, 5, 7, 10, 14, 20]);
    const mean = chart.series[0].values;
    expect(mean[0]).toBeCloseTo(1);
    expect(mean[2]).toBeNull();  // x 7 is the dqn run's only
    expect(chart.series[3].values[2]).toBe(5);
  });
  it("draws one ticked run of a group as a line, and smooths before the band", () => {
    const one = chartOf([runs[0]], data, "step", 0);
    expect(one.series.map((s) => s.kind)).toEqual(["line"]);
    const smooth = chartOf(runs, data, "step", 0.9);
    expect(smooth.series[0].values[5]).not.toBeCloseTo(chartOf(runs, data, "step", 0).series[0].values[5] as number);
  });
  it("uses wall time from each run's first point", () => {
    const chart = chartOf([runs[3]], data, "time", 0);
    expect(chart.x).toEqual([0, 14, 28]);
  });
});

describe("the table", () => {
  it("has a column per metric and hyperparameter", () => {
    const runs = [run("a", "g", 1, [["loss", 0.5], ["return", 10]], { lr: 0.001, algo: "ppo" }),
      run("b", "g", 2, [["return", 12]], { lr: 0.01, clip: true })];
    expect(tableColumns(runs)).toEqual({ metrics: ["loss", "return"], hparams: ["algo", "clip", "lr"] });
    expect(finalValue(runs[1], "return")).toBe(12);
    expect(finalValue(runs[1], "loss")).toBeNull();
    expect(hparamText(0.00012345)).toBe("0.0001234");
    expect(hparamText(true)).toBe("true");
    expect(hparamText(null)).toBe("–");
  });
});
