// Keys for a hand-controlled arm (a Menagerie arm whose spec says metadata.control is
// "hand_steps" or "hand"): the arrow keys move the hand across the table (x, y), W and S up
// and down (z), Space opens or closes the gripper (its state held from step to step), Shift
// makes the moves smaller. No key on an axis keeps the hand there.
//
// - "hand_steps": MultiDiscrete([L, L, L, 2]); level i moves by (i - m) / m hand steps, m =
//   (L - 1) / 2: a key chooses the outermost level (0 or L - 1), with Shift the one beside the
//   middle (m - 1 or m + 1), no key the middle (m, stay). Gripper 0 open, 1 closed.
// - "hand": Box([-1, -1, -1, 0], [1, 1, 1, 1]) in units of hand_step: a key gives -1 or 1,
//   with Shift -0.25 or 0.25, no key 0. Gripper 0 open, 1 closed (>= 0.5 is closed).
//
// Which way an arrow moves the hand depends on the camera the picture comes from, so that the
// hand goes the way the arrow points on screen: the overview and front cameras face the arm
// (ArrowUp moves it away from the camera, -x; ArrowRight +y), the side camera looks along +y
// (ArrowRight +x, ArrowUp +y), the top camera looks down with +x up the picture (ArrowLeft +y).
import type { KeyName } from "./keyMap";
import { boundValues, sizeOf, type SpaceJson } from "./spaces";

export type HandMode = "steps" | "box";
export type HandView = "facing" | "side" | "top";

/** The hand's axes as the action orders them. */
export const HAND_AXES = ["x", "y", "z"] as const;
export const GRIPPER = 3;

/** A key that moves the hand along one axis. */
export interface HandBinding {
  key: KeyName;
  axis: 0 | 1 | 2;
  sign: 1 | -1;
}

export interface HandKeys {
  mode: HandMode;
  /** L, the choices per axis (hand_steps); 0 under "hand". */
  levels: number;
  view: HandView;
  bindings: HandBinding[];
  /** The action's element names (hand_x, hand_y, hand_z, gripper). */
  names: string[];
}

/** The Box value of a Shift-held (smaller) move under "hand". */
export const FINE_BOX_MOVE = 0.25;
/** Key that toggles the gripper, and the key that makes moves smaller. */
export const GRIPPER_KEY: KeyName = "Space";
export const FINE_KEY: KeyName = "Shift";

const VIEW_BINDINGS: Record<HandView, HandBinding[]> = {
  facing: [
    { key: "ArrowUp", axis: 0, sign: -1 }, { key: "ArrowDown", axis: 0, sign: 1 },
    { key: "ArrowLeft", axis: 1, sign: -1 }, { key: "ArrowRight", axis: 1, sign: 1 },
  ],
  side: [
    { key: "ArrowRight", axis: 0, sign: 1 }, { key: "ArrowLeft", axis: 0, sign: -1 },
    { key: "ArrowUp", axis: 1, sign: 1 }, { key: "ArrowDown", axis: 1, sign: -1 },
  ],
  top: [
    { key: "ArrowUp", axis: 0, sign: 1 }, { key: "ArrowDown", axis: 0, sign: -1 },
    { key: "ArrowLeft", axis: 1, sign: 1 }, { key: "ArrowRight", axis: 1, sign: -1 },
  ],
};
const Z_BINDINGS: HandBinding[] = [{ key: "w", axis: 2, sign: 1 }, { key: "s", axis: 2, sign: -1 }];

/** The view the arrows follow for the session's `camera` kwarg (default: the overview camera, facing the arm). */
export function handView(camera: unknown): HandView {
  if (camera === "side") return "side";
  if (camera === "top") return "top";
  return "facing";
}

/** The KeyName a hand key handler uses for a keyboard event's `key`: letters in lower case, " " as Space. */
export function handKeyName(key: string): KeyName {
  if (key === " " || key === "Spacebar") return "Space";
  return key.length === 1 ? key.toLowerCase() : key;
}

/**
 * The hand keys for a session, or null when it is not hand-controlled: metadata.control is
 * "hand_steps" with a MultiDiscrete([L, L, L, 2]) action (L odd, at least 3), or "hand" with
 * a Box of 4 elements.
 */
export function handKeys(space: SpaceJson | null, metadata: Record<string, unknown> | undefined, camera?: unknown): HandKeys | null {
  const control = metadata?.control;
  if (!space || (control !== "hand_steps" && control !== "hand")) return null;
  const rawNames = metadata?.action_names;
  const names = Array.isArray(rawNames) && rawNames.length === 4 && rawNames.every((n) => typeof n === "string")
    ? (rawNames as string[]) : ["hand_x", "hand_y", "hand_z", "gripper"];
  const view = handView(camera);
  const bindings = [...VIEW_BINDINGS[view], ...Z_BINDINGS];
  if (control === "hand_steps" && space.type === "multi_discrete") {
    const nvec = space.nvec ?? [];
    if (nvec.length !== 4 || nvec.some((n) => Array.isArray(n))) return null;
    const [x, y, z, g] = nvec as number[];
    const starts = Array.isArray(space.start) ? space.start : [];
    if (x !== y || y !== z || x < 3 || x % 2 !== 1 || g !== 2 || starts.some((s) => s !== 0)) return null;
    return { mode: "steps", levels: x, view, bindings, names };
  }
  if (control === "hand" && space.type === "box" && sizeOf(space.shape) === 4 && (space.shape ?? []).length === 1) {
    return { mode: "box", levels: 0, view, bindings, names };
  }
  return null;
}

/** The action that keeps the hand where it is with the gripper as given (0 open, 1 closed). */
export function stayAction(hand: HandKeys, gripper: number): number[] {
  const still = hand.mode === "steps" ? (hand.levels - 1) / 2 : 0;
  return [still, still, still, gripper >= 0.5 ? 1 : 0];
}

/**
 * The action for the keys held (or pressed since the last step) and the gripper's state:
 * opposite keys on one axis cancel out.
 */
export function handAction(hand: HandKeys, down: ReadonlySet<KeyName>, gripper: number): number[] {
  const action = stayAction(hand, gripper);
  const fine = down.has(FINE_KEY);
  const middle = (hand.levels - 1) / 2;
  const direction = [0, 0, 0];
  for (const binding of hand.bindings) if (down.has(binding.key)) direction[binding.axis] += binding.sign;
  for (let axis = 0; axis < 3; axis++) {
    const sign = Math.sign(direction[axis]);
    if (sign === 0) continue;
    action[axis] = hand.mode === "steps" ? middle + sign * (fine ? 1 : middle) : sign * (fine ? FINE_BOX_MOVE : 1);
  }
  return action;
}

/** The keys the hand listens to (their browser default is suppressed while on the page). */
export function handKeySet(hand: HandKeys): Set<KeyName> {
  return new Set([...hand.bindings.map((b) => b.key), GRIPPER_KEY]);
}

/** An axis' move in words for the legend: "x −" / "z +". */
export function bindingLabel(binding: HandBinding): string {
  return `${HAND_AXES[binding.axis]} ${binding.sign > 0 ? "+" : "−"}`;
}

/** What the action does on one axis, in words: "stay", "+1 step", "−½ step". */
export function axisMoveText(hand: HandKeys, value: number): string {
  const units = hand.mode === "steps" ? (value - (hand.levels - 1) / 2) / ((hand.levels - 1) / 2) : value;
  if (units === 0) return "stay";
  const size = Math.abs(units);
  const text = size === 1 ? "1 step" : `${Number(size.toFixed(2))} step`;
  return `${units > 0 ? "+" : "−"}${text}`;
}

/** The Box bounds check of a hand action (used where an action comes from elsewhere). */
export function withinBox(space: SpaceJson, action: readonly number[]): boolean {
  const size = sizeOf(space.shape);
  const low = boundValues(space.low, size, -Infinity);
  const high = boundValues(space.high, size, Infinity);
  return action.length === size && action.every((v, i) => v >= low[i] && v <= high[i]);
}
