// What the Replay page loads: the recording's metadata (GET /v0/recordings/{id}: meta.json with
// recording.json's world_changes, and `open_episode`: the episode a recording in progress is
// recording, polled while it records), and for the shown episode its arrays for the plots
// (?arrays=rewards,agent.*,info.is_success and a thinned life's frame_steps) and its frames'
// details (state.*, teacher.action, teacher.valid and the actions they go with), never its frames;
// the observation and action plots load their arrays on their own (signalData.ts).
import { useEffect, useRef, useState } from "react";
import { api, type ApiError, must } from "../../api/client";
import { type EpisodeArray, flatNumbers } from "../../lib/replay/arrays";
import type { FrameSource } from "../../lib/replay/frames";
import { episodePlots, type EpisodePlots, FRAME_STEPS, plotArrayNames, REWARDS } from "../../lib/replay/plotData";
import { detailArrayNames, teacherPlot } from "../../lib/replay/stepDetails";
import { episodeSteps, type EpisodeSteps } from "../../lib/replay/steps";

/** An entry of meta.json's `episodes`. */
export type EpisodeEntry = Record<string, unknown> & { index: number };

/** The episode a recording in progress is recording, as written so far (`open_episode`). */
export interface OpenEpisode {
  index: number;
  length: number;
}

export interface RecordingMeta {
  raw: Record<string, unknown>;
  id: string;
  envId: string | null;
  /** The finished episodes (meta.json's). */
  episodes: EpisodeEntry[];
  /** The episode being recorded (null when none). */
  openEpisode: OpenEpisode | null;
  worldChanges: unknown[];
}

/** Milliseconds between two reads of a recording's metadata while it records. */
export const RECORDING_POLL_MS = 2000;

export interface EpisodeData {
  index: number;
  entry: EpisodeEntry;
  arrayNames: string[];
  /** Every array's dtype and shape (`array_shapes`), loaded or not. */
  arrayShapes: Record<string, { dtype: string; shape: number[] }>;
  steps: EpisodeSteps;
  plots: EpisodePlots;
  rewards: number[];
  /** The arrays of the frames' details (lib/replay/stepDetails.ts). */
  details: Record<string, EpisodeArray>;
  frames: FrameSource;
  /** Milliseconds from asking for the arrays to having the plot data. */
  loadMs: number;
  /** The episode is still being recorded: its steps so far. */
  inProgress: boolean;
}

export type Loaded<T> = { state: "loading" } | { state: "error"; message: string } | { state: "ready"; value: T };

export function errorMessage(error: unknown): string {
  if (typeof error === "object" && error !== null && "detail" in error) return String((error as ApiError).detail);
  return error instanceof Error ? error.message : String(error);
}

function toMeta(raw: Record<string, unknown>, id: string): RecordingMeta {
  const episodes = (Array.isArray(raw.episodes) ? raw.episodes : [])
    .filter((e): e is EpisodeEntry => typeof e === "object" && e !== null && typeof (e as EpisodeEntry).index === "number")
    .sort((a, b) => a.index - b.index);
  return {
    raw, id,
    envId: typeof raw.env_id === "string" ? raw.env_id : null,
    episodes,
    openEpisode: openEpisodeOf(raw.open_episode, episodes),
    worldChanges: Array.isArray(raw.world_changes) ? raw.world_changes : [],
  };
}

function openEpisodeOf(value: unknown, finished: readonly EpisodeEntry[]): OpenEpisode | null {
  if (typeof value !== "object" || value === null) return null;
  const { index, length } = value as Record<string, unknown>;
  if (typeof index !== "number" || typeof length !== "number") return null;
  return finished.some((e) => e.index === index) ? null : { index, length };
}

/** The episodes to pick from: the finished ones, then the one being recorded (its entry so far,
 * `in_progress: true`). */
export function replayEpisodes(meta: RecordingMeta): EpisodeEntry[] {
  const open = meta.openEpisode;
  if (open === null) return meta.episodes;
  const raw = meta.raw.open_episode as Record<string, unknown>;
  return [...meta.episodes, { index: open.index, length: open.length, return: raw.return, in_progress: true }];
}

/** The recording's metadata; read again every `RECORDING_POLL_MS` while it records (the value
 * changes only when what was read did, so what depends on it is not redone for nothing). */
export function useRecording(recordingId: string): Loaded<RecordingMeta> {
  const [loaded, setLoaded] = useState<Loaded<RecordingMeta>>({ state: "loading" });
  useEffect(() => {
    let live = true;
    let timer: number | undefined;
    let lastText = "";
    setLoaded({ state: "loading" });
    const read = (first: boolean) => {
      must(api.GET("/v0/recordings/{recording_id}", { params: { path: { recording_id: recordingId } } }))
        .then((raw) => {
          if (!live) return;
          const text = JSON.stringify(raw);
          if (text !== lastText) {
            lastText = text;
            setLoaded({ state: "ready", value: toMeta(raw as Record<string, unknown>, recordingId) });
          }
          if ((raw as Record<string, unknown>).status === "recording") timer = window.setTimeout(() => read(false), RECORDING_POLL_MS);
        })
        .catch((e: unknown) => {
          if (!live) return;
          if (first) setLoaded({ state: "error", message: errorMessage(e) });
          else timer = window.setTimeout(() => read(false), RECORDING_POLL_MS);  // keep what was read
        });
    };
    read(true);
    return () => { live = false; window.clearTimeout(timer); };
  }, [recordingId]);
  return loaded;
}

/** A thinned life's file keeps only some frames, with `frame_steps` (each kept frame's life step). */
function isThinned(arrayNames: readonly string[]): boolean {
  return arrayNames.includes(FRAME_STEPS);
}

export async function loadEpisode(recordingId: string, index: number, meta: RecordingMeta): Promise<EpisodeData> {
  const started = performance.now();
  const path = { recording_id: recordingId, index };
  const head = await must(api.GET("/v0/recordings/{recording_id}/episodes/{index}", { params: { path } }));
  const thinned = isThinned(head.array_names);
  const detailNames = detailArrayNames(head.array_names);
  const names = [...new Set([...plotArrayNames(head.array_names), ...detailNames, ...(thinned ? [FRAME_STEPS] : [])])];
  const body = names.length === 0 ? head : await must(api.GET("/v0/recordings/{recording_id}/episodes/{index}", {
    params: { path, query: { arrays: names.join(",") } },
  }));
  const arrays = body.arrays ?? {};
  const inProgress = body.in_progress === true;
  const entry = {
    ...(meta.episodes.find((e) => e.index === index) ?? {}), ...body.episode, index, ...(inProgress ? { in_progress: true } : {}),
  } as EpisodeEntry;
  const steps = episodeSteps(entry);
  const rewards = arrays[REWARDS] ? flatNumbers(arrays[REWARDS]) : [];
  let frames: FrameSource = { kind: "none" };
  if (thinned && arrays[FRAME_STEPS]) {
    const lifeStart = typeof entry.life_start === "number" ? entry.life_start : 0;
    frames = { kind: "thinned", lifeSteps: flatNumbers(arrays[FRAME_STEPS]), lifeStart };
  } else if (head.frame_count > 0) {
    frames = { kind: "rows", count: head.frame_count, steps };
  }
  // the plots take only their own arrays (the details' arrays, actions and state.*, are not plotted)
  const plotted = new Set(plotArrayNames(head.array_names));
  const plotArrays = Object.fromEntries(Object.entries(arrays).filter(([name]) => plotted.has(name)));
  const details = Object.fromEntries(detailNames.filter((n) => arrays[n]).map((n) => [n, arrays[n]]));
  const plots = episodePlots(plotArrays, steps.length);
  const teacher = teacherPlot(details, steps, meta.raw.action_space);
  if (teacher) plots.plots.push(teacher);
  return {
    index, entry, arrayNames: head.array_names, arrayShapes: head.array_shapes ?? {}, steps, rewards, frames, details,
    plots,
    loadMs: performance.now() - started,
    inProgress,
  };
}

/** The episode's data, loaded again when `version` changes (a refresh of an episode in
 * progress) and when an episode finished (the one shown may be it), not on every poll of a
 * recording in progress; while the same episode is loaded again, the data shown stays until the
 * new is ready. */
export function useEpisode(
  recordingId: string, index: number | null, meta: RecordingMeta | null, version = 0,
): Loaded<EpisodeData> {
  const [loaded, setLoaded] = useState<Loaded<EpisodeData>>({ state: "loading" });
  const metaRef = useRef(meta);
  metaRef.current = meta;
  const finished = meta === null ? "" : `${meta.episodes.length}:${meta.episodes.at(-1)?.index ?? ""}`;
  const shownKey = useRef("");
  useEffect(() => {
    const current = metaRef.current;
    if (index === null || current === null) return;
    const key = `${recordingId}/${index}`;
    if (shownKey.current !== key) setLoaded({ state: "loading" });
    shownKey.current = key;
    let live = true;
    loadEpisode(recordingId, index, current)
      .then((value) => { if (live) setLoaded({ state: "ready", value }); })
      .catch((e: unknown) => { if (live) setLoaded({ state: "error", message: errorMessage(e) }); });
    return () => { live = false; };
  }, [recordingId, index, finished, version]);
  return loaded;
}
