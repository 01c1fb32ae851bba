// Training runs' pure logic for the Runs pages (docs/training.md, "The Runs pages"): the x axis
// of a series (steps, frames, or wall time from the run's first point), TensorBoard's
// exponential moving average, the runs of one group drawn as their mean with a min-max band on
// a common x (each run interpolated linearly onto it, where all of them have points), and the
// table's columns (each metric's final value, each hyperparameter).

export type XAxis = "step" | "frames" | "time";

/** One series as `GET /v0/runs/{id}/metrics` gives it. */
export interface SeriesData {
  step: number[];
  value: number[];
  time: number[];
  frames: (number | null)[];
}

/** What the logic needs of a run (the API's `RunPublic` has more). */
export interface RunLike {
  id: string;
  name: string;
  group: string;
  seed?: number | null;
  hparams: Record<string, unknown>;
  metrics: { name: string; last_value: number; last_step: number }[];
}

export interface Curve {
  x: number[];
  y: number[];
}

/** The series against `axis`: steps; frames (points without frames left out); or seconds since
 * the series' first point. Sorted by x. */
export function curveOf(series: SeriesData, axis: XAxis): Curve {
  const x: number[] = [];
  const y: number[] = [];
  const t0 = series.time.length > 0 ? series.time[0] : 0;
  for (let i = 0; i < series.step.length; i++) {
    let xi: number | null;
    if (axis === "step") xi = series.step[i];
    else if (axis === "frames") xi = series.frames[i] ?? null;
    else xi = series.time[i] - t0;
    if (xi === null || !Number.isFinite(xi) || !Number.isFinite(series.value[i])) continue;
    x.push(xi);
    y.push(series.value[i]);
  }
  if (axis !== "step") {
    const order = x.map((_, i) => i).sort((a, b) => x[a] - x[b]);
    return { x: order.map((i) => x[i]), y: order.map((i) => y[i]) };
  }
  return { x, y };
}

/** TensorBoard's smoothing: an exponential moving average with `weight` in [0, 1), debiased
 * so that the first points are not pulled toward 0. weight 0: the values as they are. */
export function ema(values: readonly number[], weight: number): number[] {
  if (weight <= 0) return [...values];
  const w = Math.min(weight, 0.999);
  let last = 0;
  let count = 0;
  return values.map((v) => {
    if (!Number.isFinite(v)) return v;
    last = last * w + (1 - w) * v;
    count += 1;
    return last / (1 - Math.pow(w, count));
  });
}

/** `curve`'s y at `x` by linear interpolation; null outside its x range. */
export function interpolate(curve: Curve, x: number): number | null {
  const xs = curve.x;
  const n = xs.length;
  if (n === 0 || x < xs[0] || x > xs[n - 1]) return null;
  let lo = 0;
  let hi = n - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (xs[mid] <= x) lo = mid;
    else hi = mid;
  }
  if (xs[lo] === x || lo === hi) return curve.y[lo];
  if (xs[hi] === x) return curve.y[hi];
  const f = (x - xs[lo]) / (xs[hi] - xs[lo]);
  return curve.y[lo] + f * (curve.y[hi] - curve.y[lo]);
}

export interface Band {
  x: number[];
  mean: number[];
  min: number[];
  max: number[];
}

/** The runs' mean, min and max on a common x: the union of their x values where every run has
 * points (between the latest first x and the earliest last x), at most `maxPoints` of them
 * evenly picked, each run interpolated there. Empty when the runs do not overlap. */
export function bandOf(curves: readonly Curve[], maxPoints = 1000): Band {
  const usable = curves.filter((c) => c.x.length > 0);
  if (usable.length === 0) return { x: [], mean: [], min: [], max: [] };
  const start = Math.max(...usable.map((c) => c.x[0]));
  const end = Math.min(...usable.map((c) => c.x[c.x.length - 1]));
  const all = new Set<number>();
  for (const c of usable) for (const x of c.x) if (x >= start && x <= end) all.add(x);
  let grid = [...all].sort((a, b) => a - b);
  if (grid.length > maxPoints) {
    const picked = new Set<number>();
    for (let i = 0; i < maxPoints; i++) picked.add(grid[Math.round((i * (grid.length - 1)) / (maxPoints - 1))]);
    grid = [...picked].sort((a, b) => a - b);
  }
  const band: Band = { x: [], mean: [], min: [], max: [] };
  for (const x of grid) {
    const ys = usable.map((c) => interpolate(c, x)).filter((y): y is number => y !== null);
    if (ys.length !== usable.length) continue;
    band.x.push(x);
    band.mean.push(ys.reduce((a, b) => a + b, 0) / ys.length);
    band.min.push(Math.min(...ys));
    band.max.push(Math.max(...ys));
  }
  return band;
}

export interface ChartSeries {
  label: string;
  /** "mean" (of a group, with the band's "min" and "max" after it), or "line" (one run). */
  kind: "mean" | "min" | "max" | "line";
  color: string;
  values: (number | null)[];
}

export interface ChartData {
  x: number[];
  series: ChartSeries[];
  /** Pairs of indices into `series` (max, min) whose space between is shaded. */
  bands: [number, number][];
  /** What the legend names: one entry per group or single run. */
  legend: { label: string; color: string; runs: number }[];
}

export const RUN_COLORS = ["#2457d6", "#d66a24", "#1d7a3a", "#9b2fae", "#b3261e", "#0e8a8a", "#7a5c1d", "#5b6472"];

/** The chart of one metric for the ticked runs: a group of two or more ticked runs is its mean
 * line and min-max band, any other run its own line; `smoothing` (EMA weight) is applied to
 * each run before the band is made. The x values of every drawn series are merged into one
 * x (uPlot's aligned data), each series null where it has no point. */
export function chartOf(runs: readonly RunLike[], seriesByRun: ReadonlyMap<string, SeriesData | undefined>,
                        axis: XAxis, smoothing: number): ChartData {
  const groups = new Map<string, { run: RunLike; curve: Curve }[]>();
  for (const run of runs) {
    const series = seriesByRun.get(run.id);
    if (!series) continue;
    const raw = curveOf(series, axis);
    if (raw.x.length === 0) continue;
    const curve = { x: raw.x, y: ema(raw.y, smoothing) };
    const members = groups.get(run.group) ?? [];
    members.push({ run, curve });
    groups.set(run.group, members);
  }
  const drawn: { label: string; kind: ChartSeries["kind"]; color: string; x: number[]; y: number[] }[] = [];
  const legend: ChartData["legend"] = [];
  let colorIndex = 0;
  for (const [group, members] of groups) {
    const color = RUN_COLORS[colorIndex++ % RUN_COLORS.length];
    if (members.length >= 2) {
      const band = bandOf(members.map((m) => m.curve));
      if (band.x.length > 0) {
        const label = `${group} (mean of ${members.length})`;
        drawn.push({ label, kind: "mean", color, x: band.x, y: band.mean });
        drawn.push({ label: `${group} min`, kind: "min", color, x: band.x, y: band.min });
        drawn.push({ label: `${group} max`, kind: "max", color, x: band.x, y: band.max });
        legend.push({ label, color, runs: members.length });
        continue;
      }
    }
    for (const [i, m] of members.entries()) {
      const runColor = i === 0 ? color : RUN_COLORS[colorIndex++ % RUN_COLORS.length];
      const label = m.run.seed !== null && m.run.seed !== undefined && members.length > 1
        ? `${m.run.name} (seed ${m.run.seed})` : m.run.name;
      drawn.push({ label, kind: "line", color: runColor, x: m.curve.x, y: m.curve.y });
      legend.push({ label, color: runColor, runs: 1 });
    }
  }
  const xs = [...new Set(drawn.flatMap((d) => d.x))].sort((a, b) => a - b);
  const index = new Map(xs.map((x, i) => [x, i]));
  const series: ChartSeries[] = drawn.map((d) => {
    const values: (number | null)[] = new Array<number | null>(xs.length).fill(null);
    d.x.forEach((x, i) => { values[index.get(x)!] = d.y[i]; });
    return { label: d.label, kind: d.kind, color: d.color, values };
  });
  const bands: [number, number][] = [];
  series.forEach((s, i) => { if (s.kind === "max") bands.push([i, i - 1]); });
  return { x: xs, series, bands, legend };
}

export interface RunsTable {
  metrics: string[];
  hparams: string[];
}

/** The table's extra columns: every metric name and every hyperparameter of the runs, sorted. */
export function tableColumns(runs: readonly RunLike[]): RunsTable {
  const metrics = new Set<string>();
  const hparams = new Set<string>();
  for (const run of runs) {
    for (const m of run.metrics) metrics.add(m.name);
    for (const key of Object.keys(run.hparams)) hparams.add(key);
  }
  return { metrics: [...metrics].sort(), hparams: [...hparams].sort() };
}

/** A run's final value of `metric` (its value at the last step), or null. */
export function finalValue(run: RunLike, metric: string): number | null {
  return run.metrics.find((m) => m.name === metric)?.last_value ?? null;
}

/** An hparam's value as the table shows it. */
export function hparamText(value: unknown): string {
  if (value === null || value === undefined) return "–";
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(4)));
  return String(value);
}

/** Every metric name of the runs, the first one the default choice. */
export function metricNames(runs: readonly RunLike[]): string[] {
  return tableColumns(runs).metrics;
}
