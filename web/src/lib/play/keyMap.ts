// Keys for a Discrete action space: which action the keys held down (or pressed since the last
// step) choose, and the map shown on screen.
//
// - Names made only of UP, DOWN, LEFT, RIGHT, FIRE and NOOP (Atari's: "UPRIGHTFIRE", "LEFT",
//   "NOOP"): the arrow keys and Space combine into the action of that name (held together,
//   ArrowUp + ArrowRight + Space is UPRIGHTFIRE); no key is NOOP. A game with RIGHT and LEFT
//   but no UP or DOWN action (Pong, whose paddle RIGHT moves up and LEFT down) takes ArrowUp
//   for RIGHT and ArrowDown for LEFT too.
// - Two actions without names (CartPole's push left / push right): ArrowLeft 0, ArrowRight 1,
//   and with no key the last one pressed goes on.
// - Three actions without names (MountainCar, Acrobot: negative, none, positive): ArrowLeft 0,
//   ArrowRight 2, no key 1.
// - Always: digit keys 1-9 and 0 choose actions 0-9 by number (held), for any names.

export type KeyName = "ArrowUp" | "ArrowDown" | "ArrowLeft" | "ArrowRight" | "Space" | string;

export interface KeyBinding {
  /** Keys held together, e.g. ["ArrowUp", "Space"]. */
  keys: KeyName[];
  action: number;
  /** The action's name (metadata.action_names), or a description. */
  label: string;
}

export interface DiscreteKeyMap {
  bindings: KeyBinding[];
  /** The action when no mapped key is down: a number, or "last" (the last one chosen goes on). */
  idle: number | "last";
  /** What the idle action is, in words, for the map on screen. */
  idleLabel: string;
  /** Keys this map listens to (their browser default is suppressed while playing). */
  keys: Set<KeyName>;
  /** The action for the keys down now; `last` is the action of the previous step. */
  actionFor(down: ReadonlySet<KeyName>, last: number): number;
}

const DIRECTION_KEYS: Record<string, KeyName> = { UP: "ArrowUp", DOWN: "ArrowDown", LEFT: "ArrowLeft", RIGHT: "ArrowRight", FIRE: "Space" };
const TOKEN_ORDER = ["UP", "DOWN", "RIGHT", "LEFT", "FIRE"];
// The keys that also mean a token when the game has no action of their own direction.
const VERTICAL_ALIASES: Record<string, KeyName> = { RIGHT: "ArrowUp", LEFT: "ArrowDown" };

/** The KeyName of a keyboard event's `key` (" " is "Space"). */
export function keyName(key: string): KeyName {
  return key === " " || key === "Spacebar" ? "Space" : key;
}

/** A name's tokens if it is made only of direction words (separators ignored), else null. */
export function directionTokens(name: string): string[] | null {
  let rest = name.toUpperCase().replace(/[\s_-]/g, "");
  if (rest === "NOOP" || rest === "NONE") return [];
  const tokens: string[] = [];
  while (rest.length > 0) {
    const token = TOKEN_ORDER.find((t) => rest.startsWith(t));
    if (!token || tokens.includes(token)) return null;
    tokens.push(token);
    rest = rest.slice(token.length);
  }
  return tokens;
}

function canonical(tokens: readonly string[]): string {
  return TOKEN_ORDER.filter((t) => tokens.includes(t)).join("") || "NOOP";
}

/** Digit keys 1-9 and 0 for actions 0-9 (the first ten of n). */
export function digitBindings(n: number, label: (i: number) => string): KeyBinding[] {
  return Array.from({ length: Math.min(n, 10) }, (_, i) => ({ keys: [String((i + 1) % 10)], action: i, label: label(i) }));
}

/** The action the digit keys held choose, or null. */
export function digitAction(down: ReadonlySet<KeyName>, n: number): number | null {
  for (let i = 0; i < Math.min(n, 10); i++) if (down.has(String((i + 1) % 10))) return i;
  return null;
}

/** The key map of Discrete(n) with the environment's action names (or none). */
export function discreteKeyMap(n: number, names?: readonly string[] | null, start = 0): DiscreteKeyMap {
  const named = names && names.length === n ? names : null;
  const label = (i: number) => (named ? named[i] : `action ${i + start}`);
  const digits = digitBindings(n, label);
  const tokens = named?.map(directionTokens);
  if (named && tokens && tokens.every((t) => t !== null) && tokens.some((t) => t!.length > 0)) {
    const byName = new Map<string, number>();
    tokens.forEach((t, i) => byName.set(canonical(t!), i));
    const idle = byName.get("NOOP") ?? 0;
    const arrows: KeyBinding[] = tokens.flatMap((t, i) =>
      t!.length === 0 ? [] : [{ keys: TOKEN_ORDER.filter((x) => t!.includes(x)).map((x) => DIRECTION_KEYS[x]), action: i, label: named[i] }],
    );
    const used = new Set(tokens.flatMap((t) => t!));
    const aliases = verticalAliases(used);
    const aliased: KeyBinding[] = arrows.flatMap((b) => {
      const keys = b.keys.map((k) => Object.entries(aliases).find(([t]) => DIRECTION_KEYS[t] === k)?.[1] ?? k);
      return keys.some((k, i) => k !== b.keys[i]) ? [{ ...b, keys }] : [];
    });
    return {
      bindings: [...arrows, ...aliased, ...digits],
      idle,
      idleLabel: label(idle),
      keys: new Set([...[...used].map((t) => DIRECTION_KEYS[t]), ...Object.values(aliases), ...digits.flatMap((b) => b.keys)]),
      actionFor(down) {
        const digit = digitAction(down, n);
        if (digit !== null) return digit + start;
        const isDown = (t: string) => down.has(DIRECTION_KEYS[t]) || (aliases[t] !== undefined && down.has(aliases[t]));
        const held = TOKEN_ORDER.filter((t) => used.has(t) && isDown(t));
        return (bestMatch(held, byName) ?? idle) + start;
      },
    };
  }
  if (!named && (n === 2 || n === 3)) {
    const right = n - 1;
    const idle: number | "last" = n === 2 ? "last" : 1;
    const bindings: KeyBinding[] = [
      { keys: ["ArrowLeft"], action: 0, label: n === 2 ? "action 0 (left)" : "action 0 (negative)" },
      { keys: ["ArrowRight"], action: right, label: n === 2 ? "action 1 (right)" : "action 2 (positive)" },
      ...digits,
    ];
    return {
      bindings,
      idle,
      idleLabel: idle === "last" ? "the last action goes on" : label(1),
      keys: new Set(["ArrowLeft", "ArrowRight", ...digits.flatMap((b) => b.keys)]),
      actionFor(down, last) {
        const digit = digitAction(down, n);
        if (digit !== null) return digit + start;
        const left = down.has("ArrowLeft");
        const rightDown = down.has("ArrowRight");
        if (left && !rightDown) return start;
        if (rightDown && !left) return right + start;
        return idle === "last" ? last : idle + start;
      },
    };
  }
  return {
    bindings: digits,
    idle: 0,
    idleLabel: label(0),
    keys: new Set(digits.flatMap((b) => b.keys)),
    actionFor(down) {
      return (digitAction(down, n) ?? 0) + start;
    },
  };
}

/** ArrowUp for RIGHT and ArrowDown for LEFT when the game has RIGHT and LEFT but neither UP nor DOWN. */
function verticalAliases(used: ReadonlySet<string>): Record<string, KeyName> {
  if (used.has("UP") || used.has("DOWN") || !used.has("RIGHT") || !used.has("LEFT")) return {};
  return VERTICAL_ALIASES;
}

/** The action named by the held tokens, else by the most of them (dropping FIRE last). */
function bestMatch(held: readonly string[], byName: ReadonlyMap<string, number>): number | undefined {
  const exact = byName.get(canonical(held));
  if (exact !== undefined) return exact;
  let best: { action: number; score: number } | undefined;
  for (const [name, action] of byName) {
    const tokens = directionTokens(name) ?? [];
    if (tokens.length === 0 || !tokens.every((t) => held.includes(t))) continue;
    const score = tokens.length * 2 + (tokens.includes("FIRE") ? 1 : 0);
    if (!best || score > best.score) best = { action, score };
  }
  return best?.action;
}

/** A key's name on screen: "←", "Space", "1", "F". */
export function keyLabel(key: KeyName): string {
  return { ArrowUp: "↑", ArrowDown: "↓", ArrowLeft: "←", ArrowRight: "→", Space: "Space" }[key] ?? key.toUpperCase();
}
