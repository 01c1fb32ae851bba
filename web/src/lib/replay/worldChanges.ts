// The recording's world changes (recording.json `world_changes`, e.g. {"at": 5000, "change":
// "mass", "body": "hand", "scale": 2.0}) placed on an episode's timeline. `at` counts the
// session's steps across episodes; the episode's step s is session step `before + s`, where
// `before` is the steps the session took before the episode began.

export interface WorldChangeMark {
  step: number;
  label: string;
}

interface EpisodeEntry {
  index?: unknown;
  length?: unknown;
  life_start?: unknown;
}

/** Steps the session took before episode `index` began. */
export function stepsBeforeEpisode(
  episodes: readonly EpisodeEntry[],
  index: number,
  lifeOffset: unknown,
): number {
  const entry = episodes.find((e) => e.index === index);
  if (entry && typeof entry.life_start === "number" && typeof lifeOffset === "number") {
    return entry.life_start - lifeOffset;
  }
  let total = 0;
  for (const e of episodes) {
    if (typeof e.index === "number" && e.index < index && typeof e.length === "number") total += e.length;
  }
  return total;
}

function describe(change: Record<string, unknown>): string {
  const kind = typeof change.change === "string" ? change.change : "change";
  const details = Object.entries(change)
    .filter(([key]) => key !== "at" && key !== "change")
    .map(([key, value]) => `${key}=${JSON.stringify(value)}`);
  return details.length > 0 ? `${kind} (${details.join(", ")})` : kind;
}

/** The changes that fall within the episode (steps 0..length), in order. */
export function worldChangeMarks(changes: unknown, before: number, length: number): WorldChangeMark[] {
  if (!Array.isArray(changes)) return [];
  const marks: WorldChangeMark[] = [];
  for (const change of changes) {
    if (typeof change !== "object" || change === null) continue;
    const at = (change as Record<string, unknown>).at;
    if (typeof at !== "number" || !Number.isFinite(at)) continue;
    const step = at - before;
    if (step >= 0 && step <= length) marks.push({ step, label: describe(change as Record<string, unknown>) });
  }
  return marks.sort((a, b) => a.step - b.step);
}
