// The Options dialog's world-changes editor: a JSON list of timeline entries sent as the
// session's `kwargs.world_changes` (platform_contracts.world_changes defines the kinds and their
// fields; docs/world-changes.md). The browser checks only the shape, so that a typo says what
// is wrong at once: a JSON list of objects, each with "at" (a whole number of the session's
// steps, 0 or more) and "change" (a kind's name). Kinds, bodies, fields and ranges are the
// server's to check: its 422 names the entry and field ("kwargs.world_changes[1].body").
import { isEntry, type WorldChangeEntry } from "./entries";

export const WORLD_CHANGES = "world_changes";
export const WORLD_CHANGES_FIELD = `kwargs.${WORLD_CHANGES}`;

/** The kinds of change (platform_contracts.world_changes), for the editor's help. */
export const WORLD_CHANGE_KINDS = ["mass", "friction", "motor_strength", "position", "sensor_offset", "sensor_noise"] as const;

/** The platform overview's example, shown in the empty editor. */
export const WORLD_CHANGES_EXAMPLE = `[
  {"at": 5000, "change": "mass", "body": "hand", "scale": 2.0},
  {"at": 5000, "change": "sensor_noise", "std": 0.01, "indices": [0, 1, 2]},
  {"at": 9000, "change": "mass", "body": "hand", "scale": 1.0}
]`;

export type WorldChangesInput =
  | { ok: true; value: WorldChangeEntry[] | undefined }
  | { ok: false; error: string };

/** The editor's text as the kwarg's value (undefined when empty), or what is wrong with it. */
export function parseWorldChanges(text: string): WorldChangesInput {
  if (text.trim() === "") return { ok: true, value: undefined };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return { ok: false, error: `not JSON: ${(e as Error).message}` };
  }
  if (!Array.isArray(parsed)) {
    return { ok: false, error: 'world changes must be a JSON list of changes, e.g. [{"at": 100, "change": "mass", "body": "hand", "scale": 2.0}]' };
  }
  for (const [i, entry] of parsed.entries()) {
    const where = `world_changes[${i}]`;
    if (!isEntry(entry)) {
      return { ok: false, error: `${where} must be an object such as {"at": 100, "change": "mass", ...}` };
    }
    const { at, change } = entry;
    if (!("at" in entry)) return { ok: false, error: `${where} needs "at": the session's step it applies before (a whole number, 0 or more)` };
    if (typeof at !== "number" || !Number.isInteger(at) || at < 0) {
      return { ok: false, error: `${where}.at must be a whole number of steps, 0 or more (got ${JSON.stringify(at)})` };
    }
    if (typeof change !== "string" || change === "") {
      return { ok: false, error: `${where} needs "change": one of ${WORLD_CHANGE_KINDS.join(", ")}` };
    }
  }
  return { ok: true, value: parsed as WorldChangeEntry[] };
}

/** Whether a 422's `field` is about the world changes (kwargs.world_changes or one of its entries). */
export function isWorldChangesField(field: string | null | undefined): boolean {
  return typeof field === "string" && (field === WORLD_CHANGES_FIELD || field.startsWith(`${WORLD_CHANGES_FIELD}[`) || field.startsWith(`${WORLD_CHANGES_FIELD}.`));
}
