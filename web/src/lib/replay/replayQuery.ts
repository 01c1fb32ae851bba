// The replay's deep link: `?episode=3&step=120`. Either may be missing or wrong; the page then
// opens the first episode or its first step.

export interface ReplayQuery {
  episode: number | null;
  step: number | null;
}

function nonNegativeInt(text: string | null): number | null {
  if (text === null || !/^\d+$/.test(text.trim())) return null;
  const value = Number(text.trim());
  return Number.isSafeInteger(value) ? value : null;
}

export function parseReplayQuery(params: URLSearchParams): ReplayQuery {
  return { episode: nonNegativeInt(params.get("episode")), step: nonNegativeInt(params.get("step")) };
}

/** The episode to open: the asked one when the recording has it, else the first. */
export function chooseEpisode(asked: number | null, indexes: readonly number[]): number | null {
  if (indexes.length === 0) return null;
  if (asked !== null && indexes.includes(asked)) return asked;
  return indexes[0];
}

/** The step a changed `?step=` moves the cursor to, or null: no step asked, the step shown already,
 *  or the page's own write of the link coming back (the link follows the cursor a moment later;
 *  by the time the address has changed, the cursor may have moved on, and must stay there). */
export function stepAskedByLink(asked: number | null, written: number | null, shown: number): number | null {
  if (asked === null || asked === written || asked === shown) return null;
  return asked;
}
