// What the replay plots over an episode, from its arrays (never its frames): the reward, every
// `agent.<name>` value (one series per element of a list value) and `info.is_success`, each
// with one point per step (x = 1..T). Missing values (NaN, as the recorder stores a step that
// had none) and non-finite ones are gaps (null), which uPlot draws as breaks in the line.
import { columnsOf, type EpisodeArray } from "./arrays";

export const REWARDS = "rewards";
export const IS_SUCCESS = "info.is_success";
export const AGENT_PREFIX = "agent.";
export const FRAME_STEPS = "frame_steps";

export interface PlotSeries {
  label: string;
  values: (number | null)[];
}

export interface PlotSpec {
  /** "reward", "agent.<name>" or "is_success". */
  id: string;
  title: string;
  /** Drawn as steps (a flag's 0/1) rather than lines. */
  stepped: boolean;
  series: PlotSeries[];
  /** The steps of the values (default: the episode's 1..T). */
  x?: number[];
  /** A 0/1 flag, kept in a fixed range (default: `stepped`). */
  flag?: boolean;
  /** The values' unit ("s" for seconds; default: from the plot's name, numberFormat.unitOfName). */
  unit?: string | null;
  /** Names of whole-number values (a Discrete action's), shown beside them. */
  valueNames?: string[];
}

export interface EpisodePlots {
  /** Step numbers 1..T, shared by every plot. */
  x: number[];
  plots: PlotSpec[];
}

/** The arrays of an episode the plots need, among those it has (its `array_names`). */
export function plotArrayNames(arrayNames: readonly string[]): string[] {
  const agent = arrayNames.filter((n) => n.startsWith(AGENT_PREFIX)).sort();
  const names = [REWARDS, ...agent, IS_SUCCESS];
  return names.filter((n) => arrayNames.includes(n));
}

/** A plotted value: finite numbers as they are, anything else a gap. */
export function gap(value: number): number | null {
  return Number.isFinite(value) ? value : null;
}

function toSeries(name: string, array: EpisodeArray, length: number): PlotSeries[] {
  return columnsOf(name, array).map((column) => {
    const values = new Array<number | null>(length);
    for (let i = 0; i < length; i++) values[i] = i < column.values.length ? gap(column.values[i]) : null;
    return { label: column.label, values };
  });
}

export function episodePlots(arrays: Readonly<Record<string, EpisodeArray>>, length: number): EpisodePlots {
  const x = Array.from({ length }, (_, i) => i + 1);
  const plots: PlotSpec[] = [];
  const rewards = arrays[REWARDS];
  if (rewards) plots.push({ id: "reward", title: "reward", stepped: false, series: toSeries("reward", rewards, length) });
  for (const name of Object.keys(arrays).filter((n) => n.startsWith(AGENT_PREFIX)).sort()) {
    const series = toSeries(name.slice(AGENT_PREFIX.length), arrays[name], length);
    if (series.length > 0) plots.push({ id: name, title: name, stepped: false, series });
  }
  const success = arrays[IS_SUCCESS];
  if (success) plots.push({ id: "is_success", title: "info.is_success", stepped: true, series: toSeries("is_success", success, length) });
  return { x, plots };
}

/** A series' value at a cursor step (none at step 0, the reset). */
export function valueAtStep(series: PlotSeries, step: number): number | null {
  if (step < 1 || step > series.values.length) return null;
  return series.values[step - 1];
}

/** An id as a part of a data-testid: "agent.confidence" -> "agent-confidence", "action[0–7]" -> "action-0-7". */
export function testIdPart(id: string): string {
  return id.replace(/[^A-Za-z0-9_]+/g, "-").replace(/-+$/, "");
}
