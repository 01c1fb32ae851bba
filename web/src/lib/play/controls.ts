// The controls a person plays an action space with, chosen from the space and the
// environment's `metadata.action_names`:
// - Discrete: keys (see keyMap.ts), shown on screen;
// - Box: one named slider per element, whose value holds from step to step;
// - MultiDiscrete (one dimension of choices): a row of level buttons per choice, one level held each;
// - MultiBinary: one toggle per element;
// - anything else (Dict, Tuple, ...): no manual controls; the Random agent still plays it.
// A hand-controlled arm (handKeys.ts) keeps its level buttons or sliders, starting at "stay" with
// the gripper open, and the hand keys move it over what they hold.
import { handAction, handControlOf, handInitialValues, type HandControl } from "./handKeys";
import { doomKeyMap } from "./doomKeys";
import { discreteKeyMap, type DiscreteKeyMap } from "./keyMap";
import { boundValues, flatten, isIntegerDtype, reshape, sizeOf, type SpaceJson } from "./spaces";

/** A slider's range where the Box bound is infinite. */
const OPEN_RANGE = 10;
/** Slider positions between low and high. */
const SLIDER_STEPS = 200;

export interface Slider {
  index: number;
  name: string;
  min: number;
  max: number;
  step: number;
  /** Where it starts: 0 when inside the range, else the middle. */
  initial: number;
}

export interface LevelRow {
  index: number;
  name: string;
  /** The values the dimension takes, in order. */
  levels: number[];
  initial: number;
}

export type Controls =
  | { kind: "keys"; keyMap: DiscreteKeyMap; initial: number }
  | { kind: "sliders"; sliders: Slider[]; shape: number[]; integer: boolean; hand: HandControl | null }
  | { kind: "levels"; rows: LevelRow[]; hand: HandControl | null }
  | { kind: "toggles"; names: string[]; shape: number[] }
  | { kind: "none"; why: string };

/** What the controls hold now: slider values, levels or toggles (by index), or the last key action. */
export type ControlValues = number[];

function names(metadata: Record<string, unknown> | undefined, count: number, fallback: (i: number) => string): string[] {
  const raw = metadata?.action_names;
  const given = Array.isArray(raw) && raw.length === count && raw.every((x) => typeof x === "string") ? (raw as string[]) : null;
  return Array.from({ length: count }, (_, i) => given?.[i] ?? fallback(i));
}

/** The controls for `space`; `camera` (the session's camera kwarg) sets which way a hand's arrow keys move it. */
export function chooseControls(space: SpaceJson | null, metadata?: Record<string, unknown>, camera?: unknown): Controls {
  if (!space) return { kind: "none", why: "the session reports no action space" };
  const hand = handControlOf(space, metadata, camera);
  const handStart = hand ? handInitialValues(hand) : null;
  switch (space.type) {
    case "discrete": {
      const n = space.n ?? 0;
      const start = typeof space.start === "number" ? space.start : 0;
      const actionNames = metadata?.action_names;
      const given = Array.isArray(actionNames) ? (actionNames as string[]) : null;
      const keyMap = doomKeyMap(n, given, start) ?? discreteKeyMap(n, given, start);
      const idle = keyMap.idle === "last" ? 0 : keyMap.idle;
      return { kind: "keys", keyMap, initial: idle + start };
    }
    case "box": {
      const shape = space.shape ?? [];
      const size = sizeOf(shape);
      const low = boundValues(space.low, size, -Infinity);
      const high = boundValues(space.high, size, Infinity);
      const integer = isIntegerDtype(space.dtype);
      const labels = names(metadata, size, (i) => (size === 1 ? "action" : `action[${i}]`));
      const sliders = labels.map((name, i) => {
        const min = Number.isFinite(low[i]) ? low[i] : Math.min(-OPEN_RANGE, high[i] - 2 * OPEN_RANGE);
        const max = Number.isFinite(high[i]) ? high[i] : Math.max(OPEN_RANGE, min + 2 * OPEN_RANGE);
        const step = integer ? 1 : (max - min) / SLIDER_STEPS;
        const initial = handStart ? handStart[i] : min <= 0 && 0 <= max ? 0 : integer ? Math.round((min + max) / 2) : (min + max) / 2;
        return { index: i, name, min, max, step, initial };
      });
      return { kind: "sliders", sliders, shape, integer, hand };
    }
    case "multi_discrete": {
      const nvec = space.nvec ?? [];
      if (nvec.some((n) => Array.isArray(n))) return { kind: "none", why: `${space.repr ?? "MultiDiscrete"} has more than one dimension of choices` };
      const counts = nvec as number[];
      const starts = Array.isArray(space.start) ? space.start : counts.map(() => 0);
      const labels = names(metadata, counts.length, (i) => `choice ${i}`);
      const rows = counts.map((n, i) => ({
        index: i,
        name: labels[i],
        levels: Array.from({ length: n }, (_, v) => v + (starts[i] ?? 0)),
        initial: handStart ? handStart[i] : starts[i] ?? 0,
      }));
      return { kind: "levels", rows, hand };
    }
    case "multi_binary": {
      const shape = space.shape ?? [];
      return { kind: "toggles", names: names(metadata, sizeOf(shape), (i) => `bit ${i}`), shape };
    }
    default:
      return { kind: "none", why: `no manual controls for ${space.repr ?? space.type}; the Random agent plays it` };
  }
}

/** The controls' starting values. */
export function initialValues(controls: Controls): ControlValues {
  switch (controls.kind) {
    case "keys":
      return [controls.initial];
    case "sliders":
      return controls.sliders.map((s) => s.initial);
    case "levels":
      return controls.rows.map((r) => r.initial);
    case "toggles":
      return controls.names.map(() => 0);
    default:
      return [];
  }
}

/** The action (as the step command takes it) for what the controls hold and the keys down. */
export function actionOf(controls: Controls, values: ControlValues, down: ReadonlySet<string> = new Set()): unknown {
  switch (controls.kind) {
    case "keys":
      return controls.keyMap.actionFor(down, values[0] ?? controls.initial);
    case "sliders":
      return reshape(controls.hand ? handAction(controls.hand, values, down) : values, controls.shape);
    case "levels":
      return controls.hand ? handAction(controls.hand, values, down) : [...values];
    case "toggles":
      return reshape(values, controls.shape);
    default:
      return null;
  }
}

/** The values that show `action` on the controls (e.g. the Random agent's, or a key's choice). */
export function valuesOf(controls: Controls, action: unknown): ControlValues {
  if (controls.kind === "keys") return [Number(action)];
  return flatten(action);
}
