// The recorded actions of an episode as the stream's step commands take them. A plain space is
// one array `actions` (row t the t-th action); a Dict space is `actions.<key>` per key and a
// Tuple `actions.<i>`, nested alike (`actions.arm.joints`), rebuilt here into one JSON value
// per step from the recording's action space (meta.json `action_space`).
import type { EpisodeArray } from "./arrays";

export const ACTIONS = "actions";

/** The action arrays among an episode's `array_names`. */
export function actionArrayNames(arrayNames: readonly string[]): string[] {
  return arrayNames.filter((n) => n === ACTIONS || n.startsWith(`${ACTIONS}.`));
}

interface SpaceJson {
  type?: unknown;
  spaces?: unknown;
}

function rowOf(array: EpisodeArray | undefined, name: string, row: number): unknown {
  if (!array) throw new Error(`the recording has no array ${name}`);
  const data = array.data;
  if (!Array.isArray(data)) throw new Error(`array ${name} has no rows`);
  return data[row];
}

function build(space: SpaceJson | undefined, name: string, arrays: Readonly<Record<string, EpisodeArray>>, row: number): unknown {
  if (space?.type === "dict" && typeof space.spaces === "object" && space.spaces !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, sub] of Object.entries(space.spaces as Record<string, SpaceJson>)) {
      out[key] = build(sub, `${name}.${key}`, arrays, row);
    }
    return out;
  }
  if (space?.type === "tuple" && Array.isArray(space.spaces)) {
    return (space.spaces as SpaceJson[]).map((sub, i) => build(sub, `${name}.${i}`, arrays, row));
  }
  return rowOf(arrays[name], name, row);
}

/**
 * One row of recorded actions (or of arrays named like them under another prefix, such as the
 * teacher's suggestions `teacher.action`) as one JSON value for the action space.
 */
export function actionRow(
  arrays: Readonly<Record<string, EpisodeArray>>,
  actionSpace: unknown,
  row: number,
  prefix: string = ACTIONS,
): unknown {
  const space = (typeof actionSpace === "object" && actionSpace !== null ? actionSpace : {}) as SpaceJson;
  return build(space, prefix, arrays, row);
}

/** Number of actions the arrays hold. */
export function actionCount(arrays: Readonly<Record<string, EpisodeArray>>): number {
  const names = actionArrayNames(Object.keys(arrays));
  return names.length === 0 ? 0 : Math.min(...names.map((n) => arrays[n].shape[0] ?? 0));
}

/** The episode's actions, one JSON value per step, for the given action space. */
export function recordedActions(arrays: Readonly<Record<string, EpisodeArray>>, actionSpace: unknown): unknown[] {
  const space = (typeof actionSpace === "object" && actionSpace !== null ? actionSpace : {}) as SpaceJson;
  const count = actionCount(arrays);
  const out = new Array<unknown>(count);
  for (let row = 0; row < count; row++) out[row] = build(space, ACTIONS, arrays, row);
  return out;
}
