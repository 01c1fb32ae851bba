// The observation and action plots of an episode, for every environment (with or without labels
// or a teacher), as LeRobot's visualizer and Rerun show them: each array `observations`,
// `observations.<key>`, `actions`, `actions.<key>` is cut into groups of columns, one chart each.
// A plain observation with `observation_labels` ({name, start, stop} over the flat observation)
// is grouped by label (`height`, `velocity[0]`...); actions are named by
// `metadata.action_names`; unnamed columns are `observation[i]`/`action[i]`, 8 to a chart.
// Observation row r is step r (r + 1 for a file without a reset row); action row t is step t + 1,
// the step it led to, as the reward it earned. Images (a row of rank 2 or more, e.g. Atari's
// 210x160x3) and rows of more than MAX_PLOTTED_COLUMNS numbers are not plotted: they are listed
// with the reason.
import { flatNumbers, type EpisodeArray } from "./arrays";
import { gap, type PlotSpec } from "./plotData";
import type { EpisodeSteps } from "./steps";

export const OBSERVATIONS = "observations";
export const ACTIONS = "actions";
/** Columns per chart when nothing names a grouping. */
export const COLUMNS_PER_CHART = 8;
/** A row with more numbers than this is not plotted. */
export const MAX_PLOTTED_COLUMNS = 512;

export type SignalKind = "observation" | "action";

export interface ArrayShape {
  dtype: string;
  shape: number[];
}

export interface SignalColumn {
  /** The column's index in the flat row. */
  index: number;
  label: string;
}

/** One chart's worth of an array's columns. */
export interface SignalGroup {
  /** "observation.height", "action", "observation[8–15]"...: unique, the plot's test id. */
  id: string;
  kind: SignalKind;
  title: string;
  array: string;
  columns: SignalColumn[];
  /** Whole-number values (Discrete, MultiDiscrete) drawn as steps. */
  stepped: boolean;
  /** Names of a Discrete action's values (0 -> "NOOP"...), when the environment gives them. */
  valueNames: string[] | null;
}

/** An array that is not plotted, and why. */
export interface SkippedSignal {
  kind: SignalKind;
  array: string;
  reason: string;
}

export interface SignalLayout {
  groups: SignalGroup[];
  skipped: SkippedSignal[];
}

/** A plotted array, as fetched. */
export type ArrayState = { state: "loading" } | { state: "error"; message: string } | { state: "ready"; array: EpisodeArray };

/** The observation and action charts of the open episode (pages/replay/signalData.ts). */
export interface Signals {
  layout: SignalLayout;
  /** The chart of each shown group whose array is loaded, by group id. */
  plots: ReadonlyMap<string, PlotSpec>;
  /** Each asked-for array's state, by array name. */
  arrays: ReadonlyMap<string, ArrayState>;
  /** The ids of the groups plotted (the first few, or those picked). */
  shown: ReadonlySet<string>;
  setShown: (shown: ReadonlySet<string>) => void;
}

/** What the recording says of its environment (meta.json's spaces, recording.json's spec). */
export interface SignalFacts {
  observationSpace?: unknown;
  actionSpace?: unknown;
  spec?: unknown;
}

interface Label {
  name: string;
  start: number;
  stop: number;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The spec's observation labels, from either form ([{name, start, stop}] or {name: [start, stop]}). */
export function observationLabels(spec: unknown): Label[] {
  const raw = record(spec).observation_labels;
  const labels: Label[] = [];
  if (Array.isArray(raw)) {
    for (const item of raw) {
      const { name, start, stop } = record(item);
      if (typeof name === "string" && typeof start === "number" && typeof stop === "number") labels.push({ name, start, stop });
    }
  } else {
    for (const [name, range] of Object.entries(record(raw))) {
      if (Array.isArray(range) && typeof range[0] === "number" && typeof range[1] === "number") {
        labels.push({ name, start: range[0], stop: range[1] });
      }
    }
  }
  return labels.filter((l) => l.stop > l.start && l.start >= 0).sort((a, b) => a.start - b.start);
}

/** The spec's `metadata.action_names`, when every one is text. */
export function actionNames(spec: unknown): string[] | null {
  const names = record(record(spec).metadata).action_names;
  return Array.isArray(names) && names.length > 0 && names.every((n) => typeof n === "string") ? (names as string[]) : null;
}

/** The space of an array `prefix.<path>` within a Dict/Tuple space (the space itself for the plain array). */
function subSpace(space: unknown, path: string[]): Record<string, unknown> {
  let here = record(space);
  for (const key of path) {
    const spaces = here.spaces;
    here = record(Array.isArray(spaces) ? spaces[Number(key)] : record(spaces)[key]);
  }
  return here;
}

function isWholeNumberSpace(space: Record<string, unknown>, dtype: string): boolean {
  if (space.type === "discrete" || space.type === "multi_discrete" || space.type === "multi_binary") return true;
  return /^[<>|=]?[iub]/.test(dtype);
}

function chunks(columns: SignalColumn[], size: number): SignalColumn[][] {
  const out: SignalColumn[][] = [];
  for (let i = 0; i < columns.length; i += size) out.push(columns.slice(i, i + size));
  return out;
}

function rangeTitle(base: string, part: SignalColumn[], width: number): string {
  if (part.length === width) return base;
  const first = part[0].index;
  const last = part[part.length - 1].index;
  return first === last ? `${base}[${first}]` : `${base}[${first}–${last}]`;
}

function elementLabel(base: string, index: number, width: number): string {
  return width === 1 ? base : `${base}[${index}]`;
}

function groupsOfArray(
  kind: SignalKind, array: string, info: ArrayShape, facts: SignalFacts,
): SignalGroup[] | SkippedSignal {
  const prefix = kind === "observation" ? OBSERVATIONS : ACTIONS;
  const path = array === prefix ? [] : array.slice(prefix.length + 1).split(".");
  const base = [kind, ...path].join(".");
  const row = info.shape.slice(1);
  const width = row.reduce((a, b) => a * b, 1);
  if (row.length >= 2 && width > MAX_PLOTTED_COLUMNS / 8) {
    return { kind, array, reason: `an image (${row.join("×")}) each step: its frames are shown above, not plotted as numbers` };
  }
  if (width > MAX_PLOTTED_COLUMNS) {
    return { kind, array, reason: `${width.toLocaleString()} numbers each step: too many to plot` };
  }
  if (width === 0) return { kind, array, reason: "no numbers" };
  const space = subSpace(kind === "observation" ? facts.observationSpace : facts.actionSpace, path);
  const stepped = isWholeNumberSpace(space, info.dtype);
  const all = Array.from({ length: width }, (_, i) => ({ index: i, label: elementLabel(base, i, width) }));
  const make = (id: string, title: string, columns: SignalColumn[], valueNames: string[] | null = null): SignalGroup => ({
    id, kind, title, array, columns, stepped, valueNames,
  });

  if (kind === "observation" && path.length === 0 && row.length <= 1) {
    const labels = observationLabels(facts.spec).filter((l) => l.stop <= width);
    if (labels.length > 0) {
      const covered = new Set<number>();
      const groups = labels.map((l) => {
        const columns = all.slice(l.start, l.stop).map((c, i) => {
          covered.add(c.index);
          return { index: c.index, label: elementLabel(l.name, i, l.stop - l.start) };
        });
        return make(`observation.${l.name}`, `observation · ${l.name}`, columns);
      });
      const rest = all.filter((c) => !covered.has(c.index));
      for (const part of chunks(rest, COLUMNS_PER_CHART)) {
        groups.push(make(rangeTitle("observation", part, -1), `${rangeTitle("observation", part, -1)} (unlabelled)`, part));
      }
      return groups;
    }
  }

  if (kind === "action" && path.length === 0) {
    const names = actionNames(facts.spec);
    if (space.type === "discrete") {
      const n = typeof space.n === "number" ? space.n : null;
      const valueNames = names && n !== null && names.length === n ? names : null;
      return [make("action", "action", all, valueNames)];
    }
    if (names && names.length === width) {
      const named = all.map((c) => ({ index: c.index, label: names[c.index] }));
      return chunks(named, COLUMNS_PER_CHART).map((part) => {
        const id = rangeTitle("action", part, width);
        const names = part.length === 1 ? part[0].label : `${part[0].label} … ${part[part.length - 1].label}`;
        return make(id, part.length === width ? "action" : `${id} · ${names}`, part);
      });
    }
  }

  return chunks(all, COLUMNS_PER_CHART).map((part) => make(rangeTitle(base, part, width), rangeTitle(base, part, width), part));
}

function byName(a: string, b: string): number {
  return a === b ? 0 : a < b ? -1 : 1;
}

/** The observation and action charts of an episode, from its arrays' shapes (`array_shapes`). */
export function signalLayout(shapes: Readonly<Record<string, ArrayShape>>, facts: SignalFacts): SignalLayout {
  const groups: SignalGroup[] = [];
  const skipped: SkippedSignal[] = [];
  const kinds: [SignalKind, string][] = [["observation", OBSERVATIONS], ["action", ACTIONS]];
  for (const [kind, prefix] of kinds) {
    const arrays = Object.keys(shapes).filter((n) => n === prefix || n.startsWith(`${prefix}.`)).sort(byName);
    for (const array of arrays) {
      const made = groupsOfArray(kind, array, shapes[array], facts);
      if (Array.isArray(made)) groups.push(...made);
      else skipped.push(made);
    }
  }
  return { groups, skipped };
}

/** The arrays the groups plot. */
export function signalArrayNames(groups: readonly SignalGroup[]): string[] {
  return [...new Set(groups.map((g) => g.array))];
}

/** The steps of an array's rows: observations from the reset's step 0 (1 without a reset row), actions from 1. */
export function stepsOfRows(kind: SignalKind, rows: number, steps: EpisodeSteps): number[] {
  const first = kind === "observation" && steps.resetRow ? 0 : 1;
  return Array.from({ length: rows }, (_, i) => first + i);
}

/** The chart of a group, from its array as the gateway sends it. */
export function signalPlot(group: SignalGroup, array: EpisodeArray, steps: EpisodeSteps): PlotSpec {
  const rows = array.shape[0] ?? 0;
  const width = array.shape.slice(1).reduce((a, b) => a * b, 1);
  const flat = flatNumbers(array);
  const series = group.columns.map((column) => {
    const values = new Array<number | null>(rows);
    for (let r = 0; r < rows; r++) values[r] = gap(flat[r * width + column.index]);
    return { label: column.label, values };
  });
  return {
    id: group.id, title: group.title, stepped: group.stepped, series,
    x: stepsOfRows(group.kind, rows, steps),
    flag: false,
    unit: null,
    valueNames: group.valueNames ?? undefined,
  };
}

/** Groups shown before the user picks: the first observation and action charts, `limit` in all. */
export function defaultShown(groups: readonly SignalGroup[], limit: number): Set<string> {
  const half = Math.ceil(limit / 2);
  const first = [
    ...groups.filter((g) => g.kind === "observation").slice(0, half),
    ...groups.filter((g) => g.kind === "action").slice(0, half),
  ];
  const rest = groups.filter((g) => !first.includes(g));
  return new Set([...first, ...rest].slice(0, limit).map((g) => g.id));
}
