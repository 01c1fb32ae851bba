// One agent's episodes as the side-by-side replay's cursor reaches them: loaded as the Replay
// page loads them (replay/replayData.ts, loadEpisode), kept for a few episodes so moving back
// and forth does not load them again, and the next episode loaded ahead while the cursor nears
// the end of this one.
import { useEffect, useReducer, useRef } from "react";
import { errorMessage, type EpisodeData, type Loaded, loadEpisode, type RecordingMeta } from "../replay/replayData";

/** Episodes kept loaded at once (the one shown and the next among them). */
const KEPT = 4;

type Entry = { state: "loading" } | { state: "error"; message: string } | { state: "ready"; value: EpisodeData };

export function useRunEpisode(meta: RecordingMeta, index: number | null, upcoming: number | null): Loaded<EpisodeData> {
  // The episodes of this recording (a new one starts afresh), most recently wanted last.
  const entries = useRef({ meta, cache: new Map<number, Entry>() });
  const [, changed] = useReducer((n: number) => n + 1, 0);

  useEffect(() => {
    if (entries.current.meta !== meta) entries.current = { meta, cache: new Map() };
    const { cache } = entries.current;
    const current = () => entries.current.cache === cache;
    const want = [index, upcoming].filter((i): i is number => i !== null);
    for (const i of want) {
      if (cache.has(i)) {
        const entry = cache.get(i)!;
        cache.delete(i);
        cache.set(i, entry);
        continue;
      }
      cache.set(i, { state: "loading" });
      loadEpisode(meta.id, i, meta)
        .then((value) => { if (current()) cache.set(i, { state: "ready", value }); })
        .catch((e: unknown) => { if (current()) cache.set(i, { state: "error", message: errorMessage(e) }); })
        .finally(() => { if (current()) changed(); });
    }
    for (const i of cache.keys()) {
      if (cache.size <= KEPT) break;
      if (!want.includes(i)) cache.delete(i);
    }
  }, [meta, index, upcoming]);

  if (index === null || entries.current.meta !== meta) return { state: "loading" };
  return entries.current.cache.get(index) ?? { state: "loading" };
}
