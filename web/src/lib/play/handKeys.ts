// Hand control from the keyboard, for Menagerie arms whose session spec says
// `metadata.control` is "hand_steps" (MultiDiscrete([L, L, L, 2]): x, y, z levels, the middle
// one stays, and the gripper 0 open / 1 closed) or "hand" (Box([-1, -1, -1, 0], [1, 1, 1, 1]):
// x, y, z in units of hand_step, the gripper closed at 0.5 and above).
//
// - The arrow keys move the hand across the table, the way they point in the picture; W / S
//   move it up and down (z). Which axis an arrow moves depends on the session's camera: the
//   overview and front cameras face the arm (↑ is -x, away from the camera toward the arm's
//   base; → is +y), the side camera looks along +y (→ is +x, ↑ is +y), the top camera looks
//   down with +x up the picture (↑ is +x, ← is +y).
// - Held with Shift, a move is the smaller one (the level next to the middle; half a step).
// - With no key on an axis, the axis holds what its control holds (the middle level, stay,
//   unless a level button or slider was set).
// - Space toggles the gripper: its state is held (open or closed) from step to step.
import type { KeyName } from "./keyMap";
import { flatten, sizeOf, type SpaceJson } from "./spaces";

export type HandMode = "hand_steps" | "hand";
/** How the picture looks at the table: facing the arm (overview, front), from its side, or from above. */
export type HandView = "facing" | "side" | "top";

export interface HandControl {
  mode: HandMode;
  /** Levels per axis under hand_steps (odd; the middle one stays); 0 under hand. */
  levels: number;
  view: HandView;
}

export type Axis = 0 | 1 | 2;

export interface HandKey {
  key: KeyName;
  axis: Axis;
  sign: 1 | -1;
}

const ARROWS: Record<HandView, readonly HandKey[]> = {
  facing: [
    { key: "ArrowUp", axis: 0, sign: -1 }, { key: "ArrowDown", axis: 0, sign: 1 },
    { key: "ArrowLeft", axis: 1, sign: -1 }, { key: "ArrowRight", axis: 1, sign: 1 },
  ],
  side: [
    { key: "ArrowUp", axis: 1, sign: 1 }, { key: "ArrowDown", axis: 1, sign: -1 },
    { key: "ArrowLeft", axis: 0, sign: -1 }, { key: "ArrowRight", axis: 0, sign: 1 },
  ],
  top: [
    { key: "ArrowUp", axis: 0, sign: 1 }, { key: "ArrowDown", axis: 0, sign: -1 },
    { key: "ArrowLeft", axis: 1, sign: 1 }, { key: "ArrowRight", axis: 1, sign: -1 },
  ],
};
const UP_DOWN: readonly HandKey[] = [{ key: "w", axis: 2, sign: 1 }, { key: "s", axis: 2, sign: -1 }];

export const GRIPPER_KEY: KeyName = "Space";
export const FINE_KEY: KeyName = "Shift";
export const GRIPPER = 3;

/** The axes' names in the action (metadata.action_names of a hand-controlled arm). */
export const HAND_ACTION_NAMES = ["hand_x", "hand_y", "hand_z", "gripper"] as const;

/** The keys that move the hand in a view, each along one axis. */
export function handBindings(view: HandView): readonly HandKey[] {
  return [...ARROWS[view], ...UP_DOWN];
}

/** Every key hand control listens to. */
export const HAND_KEY_NAMES: ReadonlySet<KeyName> = new Set([...handBindings("facing").map((k) => k.key), GRIPPER_KEY, FINE_KEY]);

/** The view for the session's `camera` kwarg (default: the overview camera, which faces the arm). */
export function handView(camera: unknown): HandView {
  if (camera === "side") return "side";
  if (camera === "top") return "top";
  return "facing";
}

/** A keyboard event's key as hand control names it: letters in lower case ("W" with Shift is "w"). */
export function handKeyName(key: string): KeyName {
  if (key === " " || key === "Spacebar") return "Space";
  return key.length === 1 ? key.toLowerCase() : key;
}

/** The session's hand control, when its metadata and action space say it has one; else null. */
export function handControlOf(
  space: SpaceJson | null,
  metadata: Record<string, unknown> | undefined,
  camera?: unknown,
): HandControl | null {
  const control = metadata?.control;
  if (!space) return null;
  const view = handView(camera);
  if (control === "hand_steps" && space.type === "multi_discrete") {
    const nvec = space.nvec ?? [];
    if (nvec.length !== 4 || nvec.some((n) => Array.isArray(n))) return null;
    const [x, y, z, gripper] = nvec as number[];
    const starts = flatten(space.start ?? 0);
    if (starts.some((s) => s !== 0)) return null;
    if (x !== y || y !== z || x < 3 || x % 2 !== 1 || gripper !== 2) return null;
    return { mode: "hand_steps", levels: x, view };
  }
  if (control === "hand" && space.type === "box" && sizeOf(space.shape) === 4 && (space.shape ?? []).length === 1) {
    return { mode: "hand", levels: 0, view };
  }
  return null;
}

/** The middle level (hand_steps) or 0 (hand): the hand stays on that axis. */
export function stayValue(hand: HandControl): number {
  return hand.mode === "hand_steps" ? (hand.levels - 1) / 2 : 0;
}

/** What hand control holds before any key or button: stay on every axis, the gripper open. */
export function handInitialValues(hand: HandControl): number[] {
  const stay = stayValue(hand);
  return [stay, stay, stay, 0];
}

/** One axis' value for a move of `sign`, the whole step or (fine) the smaller one. */
export function moveValue(hand: HandControl, sign: -1 | 0 | 1, fine = false): number {
  if (sign === 0) return stayValue(hand);
  if (hand.mode === "hand") return sign * (fine ? 0.5 : 1);
  const middle = stayValue(hand);
  return fine ? middle + sign : sign > 0 ? hand.levels - 1 : 0;
}

/** The direction the keys down ask for along `axis`: -1, 1, or 0 for none (or both). */
export function heldDirection(hand: HandControl, down: ReadonlySet<KeyName>, axis: Axis): -1 | 0 | 1 {
  let direction = 0;
  for (const k of handBindings(hand.view)) if (k.axis === axis && down.has(k.key)) direction += k.sign;
  return direction > 0 ? 1 : direction < 0 ? -1 : 0;
}

/**
 * The action for the keys down: each axis with a key down moves, the others hold `held`'s
 * value (stay, by default); the gripper is `held`'s (Space toggles it, see gripperToggled).
 */
export function handAction(hand: HandControl, held: readonly number[], down: ReadonlySet<KeyName>): number[] {
  const fine = down.has(FINE_KEY);
  const action = [0, 1, 2].map((axis) => {
    const direction = heldDirection(hand, down, axis as Axis);
    return direction === 0 ? held[axis] ?? stayValue(hand) : moveValue(hand, direction, fine);
  });
  action.push(held[GRIPPER] ?? 0);
  return action;
}

/** Whether a gripper value means closed (1 under hand_steps; 0.5 and above under hand). */
export function gripperClosed(hand: HandControl, value: number | undefined): boolean {
  return hand.mode === "hand_steps" ? value === 1 : (value ?? 0) >= 0.5;
}

/** The gripper's held value toggled: open becomes closed and closed open. */
export function gripperToggled(hand: HandControl, value: number | undefined): number {
  return gripperClosed(hand, value) ? 0 : 1;
}
