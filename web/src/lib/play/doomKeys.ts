// Keys for Doom: a Discrete menu whose action names are ViZDoom buttons, alone or joined by "+"
// (the platform's Doom environments, both action sets). The arrows move and turn, Space fires,
// F is use, Q/E strafe, Z/X switch weapons. Keys held together choose the action made of
// exactly their buttons, else the action with the most of them (keeping ATTACK when it can);
// no key is NOOP. On a menu that strafes but cannot turn (basic), Left/Right strafe too.
// Digit keys choose actions 0-9 by number, as on every Discrete menu.

import { digitAction, digitBindings, type DiscreteKeyMap, type KeyBinding, type KeyName } from "./keyMap";

const BUTTON = /^(ATTACK|ALTATTACK|USE|JUMP|CROUCH|TURN180|RELOAD|ZOOM|SPEED|STRAFE|LAND|MOVE_(RIGHT|LEFT|BACKWARD|FORWARD|UP|DOWN)|TURN_(RIGHT|LEFT)|LOOK_(UP|DOWN)|SELECT_(WEAPON\d|NEXT_WEAPON|PREV_WEAPON|NEXT_ITEM|PREV_ITEM)|USE_ITEM|DROP_SELECTED_(WEAPON|ITEM))$/;

/** Which key presses each button. */
export const DOOM_KEYS: Record<string, KeyName> = {
  MOVE_FORWARD: "ArrowUp",
  MOVE_BACKWARD: "ArrowDown",
  TURN_LEFT: "ArrowLeft",
  TURN_RIGHT: "ArrowRight",
  ATTACK: "Space",
  USE: "f",
  MOVE_LEFT: "q",
  MOVE_RIGHT: "e",
  SELECT_PREV_WEAPON: "z",
  SELECT_NEXT_WEAPON: "x",
};

/** An action name's buttons (`[]` for NOOP), or null when it is not made of ViZDoom buttons. */
export function doomButtons(name: string): string[] | null {
  if (name === "NOOP") return [];
  const buttons = name.split("+");
  return buttons.every((b) => BUTTON.test(b)) ? buttons : null;
}

/** Each button's key on this menu: DOOM_KEYS, with Left/Right strafing where nothing turns. */
function keysFor(menu: readonly string[][]): Map<string, KeyName[]> {
  const present = new Set(menu.flat());
  const keys = new Map<string, KeyName[]>();
  for (const [button, key] of Object.entries(DOOM_KEYS)) if (present.has(button)) keys.set(button, [key]);
  const turns = present.has("TURN_LEFT") || present.has("TURN_RIGHT");
  if (!turns) {
    if (present.has("MOVE_LEFT")) keys.set("MOVE_LEFT", ["q", "ArrowLeft"]);
    if (present.has("MOVE_RIGHT")) keys.set("MOVE_RIGHT", ["e", "ArrowRight"]);
  }
  return keys;
}

/** The Doom key map of Discrete(n) with these action names; null when they are not Doom's. */
export function doomKeyMap(n: number, names: readonly string[] | null | undefined, start = 0): DiscreteKeyMap | null {
  if (!names || names.length !== n) return null;
  const parsed = names.map(doomButtons);
  if (parsed.some((b) => b === null)) return null;
  const menu = parsed as string[][];
  if (!menu.some((buttons) => buttons.some((b) => b in DOOM_KEYS))) return null;
  const keys = keysFor(menu);
  const noop = menu.findIndex((buttons) => buttons.length === 0);
  const idle = noop >= 0 ? noop : 0;
  const digits = digitBindings(n, (i) => names[i]);
  const keyed: KeyBinding[] = menu.flatMap((buttons, action) =>
    buttons.length > 0 && buttons.every((b) => keys.has(b))
      ? [{ keys: buttons.map((b) => keys.get(b)![0]), action, label: names[action] }]
      : [],
  );
  const isDown = (down: ReadonlySet<KeyName>, key: KeyName) => down.has(key) || (key.length === 1 && down.has(key.toUpperCase()));
  return {
    bindings: [...keyed, ...digits],
    idle,
    idleLabel: names[idle],
    keys: new Set([...[...keys.values()].flat(), ...[...keys.values()].flat().filter((k) => k.length === 1).map((k) => k.toUpperCase()),
      ...digits.flatMap((b) => b.keys)]),
    actionFor(down) {
      const digit = digitAction(down, n);
      if (digit !== null) return digit + start;
      const held = new Set([...keys].filter(([, ks]) => ks.some((k) => isDown(down, k))).map(([button]) => button));
      let best: { action: number; score: number } | undefined;
      menu.forEach((buttons, action) => {
        if (buttons.length === 0 || !buttons.every((b) => held.has(b))) return;
        const exact = buttons.length === held.size ? 1000 : 0;
        const score = exact + buttons.length * 2 + (buttons.includes("ATTACK") ? 1 : 0);
        if (!best || score > best.score) best = { action, score };
      });
      return (best?.action ?? idle) + start;
    },
  };
}
