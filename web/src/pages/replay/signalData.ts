// The observation and action arrays the Replay page plots (lib/replay/signals.ts), each fetched
// once, when a chart of it is first shown (GET .../episodes/{n}/arrays/{name}): an episode's
// frames and rewards show at once, and a wide observation is read only when picked.
import { useEffect, useMemo, useState } from "react";
import { api, must } from "../../api/client";
import type { EpisodeArray } from "../../lib/replay/arrays";
import type { PlotSpec } from "../../lib/replay/plotData";
import { type ArrayState, defaultShown, type Signals, signalLayout, signalPlot } from "../../lib/replay/signals";
import { type EpisodeData, errorMessage, type RecordingMeta } from "./replayData";

/** Up to this many charts of observations and actions are plotted before the user picks others. */
export const SHOWN_AT_FIRST = 6;

export function useSignals(meta: RecordingMeta, data: EpisodeData): Signals {
  const layout = useMemo(() => signalLayout(data.arrayShapes, {
    observationSpace: meta.raw.observation_space, actionSpace: meta.raw.action_space, spec: meta.raw.spec,
  }), [meta.raw, data.arrayShapes]);
  const [shown, setShown] = useState<ReadonlySet<string>>(() => defaultShown(layout.groups, SHOWN_AT_FIRST));
  const [arrays, setArrays] = useState<ReadonlyMap<string, ArrayState>>(() => new Map());

  const wanted = useMemo(
    () => [...new Set(layout.groups.filter((g) => shown.has(g.id)).map((g) => g.array))],
    [layout, shown],
  );

  useEffect(() => {
    const fresh = wanted.filter((name) => !arrays.has(name));
    if (fresh.length === 0) return;
    setArrays((old) => new Map([...old, ...fresh.map((name) => [name, { state: "loading" } as ArrayState] as const)]));
    for (const name of fresh) {
      const path = { recording_id: meta.id, index: data.index, name };
      must(api.GET("/v0/recordings/{recording_id}/episodes/{index}/arrays/{name}", { params: { path } }))
        .then((array) => setArrays((old) => new Map(old).set(name, { state: "ready", array: array as EpisodeArray })))
        .catch((e: unknown) => setArrays((old) => new Map(old).set(name, { state: "error", message: errorMessage(e) })));
    }
  }, [wanted, arrays, meta.id, data.index]);

  const plots = useMemo(() => {
    const out = new Map<string, PlotSpec>();
    for (const group of layout.groups) {
      const loaded = arrays.get(group.array);
      if (shown.has(group.id) && loaded?.state === "ready") out.set(group.id, signalPlot(group, loaded.array, data.steps));
    }
    return out;
  }, [layout, arrays, shown, data.steps]);

  return { layout, plots, arrays, shown, setShown };
}
