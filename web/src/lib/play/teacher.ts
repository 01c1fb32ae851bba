// The teacher's suggestion in a step's or reset's info (`info.teacher_action`: a scripted
// expert's next action, e.g. pick and place under hand control: 4 ints for hand_steps, 4
// floats for hand), read only when it fits the session's action space, so that the Teacher
// button never sends an action the server would refuse.
import { boundValues, flatten, isIntegerDtype, reshape, sizeOf, type SpaceJson } from "./spaces";

export const TEACHER_ACTION = "teacher_action";

/** The key that plays the teacher's suggestion. */
export const TEACHER_KEY = "t";

function isWhole(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value);
}

/** `value` as an action of `space` (in the form the step command takes), or null when it does not fit. */
export function fitAction(value: unknown, space: SpaceJson | null): unknown {
  if (!space || value === null || value === undefined) return null;
  switch (space.type) {
    case "discrete": {
      const start = typeof space.start === "number" ? space.start : 0;
      const n = space.n ?? 0;
      return isWhole(value) && value >= start && value < start + n ? value : null;
    }
    case "multi_discrete": {
      const nvec = flatten(space.nvec);
      const starts = space.start === undefined ? nvec.map(() => 0) : flatten(space.start);
      if (!Array.isArray(value) || value.some(Array.isArray) || value.length !== nvec.length) return null;
      const fits = value.every((v, i) => isWhole(v) && v >= (starts[i] ?? 0) && v < (starts[i] ?? 0) + nvec[i]);
      return fits ? [...value] : null;
    }
    case "multi_binary": {
      const flat = Array.isArray(value) ? flatten(value) : [];
      const fits = flat.length === sizeOf(space.shape) && flat.every((v) => v === 0 || v === 1);
      return fits ? reshape(flat, space.shape ?? []) : null;
    }
    case "box": {
      const shape = space.shape ?? [];
      const size = sizeOf(shape);
      if (shape.length > 0 && !Array.isArray(value)) return null;
      if (shape.length === 0 && typeof value !== "number") return null;
      const flat = flatten(value);
      if (flat.length !== size || flat.some((v) => !Number.isFinite(v))) return null;
      if (isIntegerDtype(space.dtype) && !flat.every(Number.isInteger)) return null;
      const low = boundValues(space.low, size, -Infinity);
      const high = boundValues(space.high, size, Infinity);
      if (flat.some((v, i) => v < low[i] || v > high[i])) return null;
      return reshape(flat, shape);
    }
    default:
      return null;
  }
}

/** The teacher's suggestion in `info`, fitted to the action space; null when there is none or it does not fit. */
export function teacherAction(info: Record<string, unknown> | null | undefined, space: SpaceJson | null): unknown {
  if (!info || !(TEACHER_ACTION in info)) return null;
  return fitAction(info[TEACHER_ACTION], space);
}
