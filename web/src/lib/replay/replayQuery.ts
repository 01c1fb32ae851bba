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
