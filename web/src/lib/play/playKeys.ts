// The keyboard while a session is played: which keys are the session's (a Discrete key map's, or
// a hand's keys), the keys held now and those pressed since the last step (a tap between two
// steps still acts once), Space toggling a hand's gripper and T playing the teacher's suggestion.
// The page passes the browser's key events here, except while the person types in a field.
import type { Controls } from "./controls";
import { GRIPPER_KEY, HAND_KEY_NAMES, type HandControl, handKeyName } from "./handKeys";
import { keyName } from "./keyMap";
import { TEACHER_KEY } from "./teacher";

/**
 * What a key press does: "held" acts at the next steps, "toggle-gripper" and "play-teacher" at
 * once, "repeat" nothing (the gripper key held down); null when the key is not the session's
 * (the browser keeps it).
 */
export type KeyPress = "held" | "toggle-gripper" | "play-teacher" | "repeat" | null;

/** The hand a hand-controlled arm's controls move, or null. */
export function handOf(controls: Controls): HandControl | null {
  return controls.kind === "levels" || controls.kind === "sliders" ? controls.hand : null;
}

export class PlayKeys {
  private readonly mapped: ReadonlySet<string>;
  private readonly nameOf: (key: string) => string;
  private readonly hasHand: boolean;
  private readonly down = new Set<string>();
  private readonly pressed = new Set<string>();

  constructor(controls: Controls) {
    const hand = handOf(controls);
    this.hasHand = hand !== null;
    this.mapped = controls.kind === "keys" ? controls.keyMap.keys : hand ? HAND_KEY_NAMES : new Set();
    this.nameOf = hand ? handKeyName : keyName;
  }

  /** A key went down (`key` as KeyboardEvent.key names it; `repeat` while it is held). */
  press(key: string, repeat: boolean): KeyPress {
    const name = this.nameOf(key);
    if (!this.mapped.has(name)) return name.toLowerCase() === TEACHER_KEY && !repeat ? "play-teacher" : null;
    if (this.hasHand && name === GRIPPER_KEY) return repeat ? "repeat" : "toggle-gripper";
    this.down.add(name);
    this.pressed.add(name);
    return "held";
  }

  /** A key went up; whether it is the session's. */
  release(key: string): boolean {
    const name = this.nameOf(key);
    this.down.delete(name);
    return this.mapped.has(name);
  }

  /** Every key is up (the window lost the focus). */
  releaseAll(): void {
    this.down.clear();
  }

  /** The keys for the next step: those held now and those pressed since the last step. */
  takeForStep(): Set<string> {
    const keys = new Set([...this.down, ...this.pressed]);
    this.pressed.clear();
    return keys;
  }

  /** Forgets the keys pressed since the last step (a step the keys did not choose). */
  forgetPressed(): void {
    this.pressed.clear();
  }
}
