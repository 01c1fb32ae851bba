// The Options dialog's WAD picker, as data: which uploaded WAD and which of its maps a Doom
// session plays (kwargs `wad` and `doom_map`, docs/doom.md), and the checks made before an
// upload is sent (the gateway makes them again).
import type { components } from "../../api/schema";

export type Wad = components["schemas"]["WadPublic"];

/** At most this many bytes are uploaded (the gateway's MAX_WAD_BYTES, 20 MB). */
export const MAX_WAD_BYTES = 20 * 1024 * 1024;

/** The picker's state: no WAD (the scenario's own map), or a WAD and one of its maps. */
export interface WadChoice {
  wad: string | null;
  map: string | null;
}

export const NO_WAD: WadChoice = { wad: null, map: null };

/** The choice after picking the WAD `id` among `wads`: its first map (or none when unknown). */
export function pickWad(wads: readonly Wad[], id: string | null): WadChoice {
  const wad = wads.find((w) => w.id === id);
  return wad ? { wad: wad.id, map: wad.maps[0] ?? null } : NO_WAD;
}

/** The kwargs a choice adds to a session: `{wad, doom_map}`, or none. */
export function wadKwargs(choice: WadChoice): Record<string, string> {
  if (!choice.wad) return {};
  return choice.map ? { wad: choice.wad, doom_map: choice.map } : { wad: choice.wad };
}

/** Why a file cannot be uploaded (a name the gateway refuses, too big, empty), or null. */
export function uploadProblem(file: { name: string; size: number }): string | null {
  if (!/\.wad$/i.test(file.name)) return `${file.name} is not a .wad file`;
  if (file.size === 0) return `${file.name} is empty`;
  if (file.size > MAX_WAD_BYTES) {
    return `${file.name} is ${(file.size / 1024 / 1024).toFixed(1)} MB: uploads are at most 20 MB`;
  }
  return null;
}

/** `wads` with `wad` in it (replacing one with its id), oldest first as the gateway lists them. */
export function withWad(wads: readonly Wad[], wad: Wad): Wad[] {
  return [...wads.filter((w) => w.id !== wad.id), wad].sort((a, b) => a.uploaded_at - b.uploaded_at);
}
