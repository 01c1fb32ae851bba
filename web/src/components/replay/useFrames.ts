// The frame on screen for a cursor step: fetched by row from
// /v0/recordings/{id}/episodes/{n}/frames/{row} into an LRU of object URLs, with the rows
// around the cursor prefetched (further ahead while playing). While the scrubber moves, the
// fetch waits for it to rest `settleMs`; a cached frame shows at once.
import { useEffect, useMemo, useRef, useState } from "react";
import { FrameLoader } from "../../lib/replay/frameLoader";
import { frameCount, frameForStep, type FrameChoice, type FrameSource, stepOfFrame } from "../../lib/replay/frames";
import { prefetchRows, prefetchWindow } from "../../lib/replay/prefetch";
import { authFetch } from "../../lib/auth/token";

export interface ShownFrame {
  url: string;
  row: number;
  step: number;
  exact: boolean;
}

interface Options {
  recordingId: string;
  episode: number;
  source: FrameSource;
  step: number;
  playing: boolean;
  stepsPerSecond: number;
  settleMs?: number;
}

export function useFrames({ recordingId, episode, source, step, playing, stepsPerSecond, settleMs = 20 }: Options) {
  const [shown, setShown] = useState<ShownFrame | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const wanted = useRef<FrameChoice | null>(null);

  const [loader, setLoader] = useState<FrameLoader | null>(null);

  useEffect(() => {
    setShown(null);
    setFailed(null);
    if (source.kind === "none") return;
    const made = new FrameLoader({
      fetchFrame: async (row, signal) => {
        const url = `/v0/recordings/${encodeURIComponent(recordingId)}/episodes/${episode}/frames/${row}`;
        const response = await authFetch(url, { signal });
        if (!response.ok) throw new Error(`frame ${row}: ${response.status} ${response.statusText}`);
        return response.blob();
      },
      createUrl: (blob) => URL.createObjectURL(blob),
      revokeUrl: (url) => URL.revokeObjectURL(url),
      capacity: 400,
      concurrency: 2,
      onLoaded: (row) => {
        const choice = wanted.current;
        if (choice && choice.row === row) show(made, choice);
      },
      onError: (row, error) => {
        if (wanted.current?.row === row) setFailed(error instanceof Error ? error.message : String(error));
      },
    });
    setLoader(made);
    return () => {
      made.dispose();
      setLoader(null);
    };
  }, [recordingId, episode, source]);

  function show(from: FrameLoader, choice: FrameChoice) {
    const url = from.url(choice.row);
    if (url === undefined) return false;
    from.cache.markShown(choice.row);
    setShown((old) => (old && old.row === choice.row && old.url === url ? old : { url, ...choice }));
    return true;
  }

  const reach = useMemo(() => prefetchWindow(playing, stepsPerSecond), [playing, stepsPerSecond]);
  const stride = reach.stride;
  // Playing faster than the screen shows, only every stride-th row is fetched and shown.
  const choice = useMemo((): FrameChoice | null => {
    const own = frameForStep(source, step);
    if (!own || stride <= 1) return own;
    const row = Math.floor(own.row / stride) * stride;
    return row === own.row ? own : { row, step: stepOfFrame(source, row) ?? own.step, exact: false };
  }, [source, step, stride]);

  useEffect(() => {
    wanted.current = choice;
    if (!loader || !choice) return;
    const cached = show(loader, choice);
    const rows = prefetchRows(choice.row, frameCount(source), reach);
    if (playing || cached) {
      loader.want(rows);
      return;
    }
    const timer = window.setTimeout(() => loader.want(rows), settleMs);
    return () => window.clearTimeout(timer);
  }, [loader, choice, playing, reach, settleMs, source]);

  return { shown, wanted: choice, failed };
}
