// The frame on screen for a cursor step: fetched by row from
// /v0/recordings/{id}/episodes/{n}/frames/{row} into an LRU of object URLs, with the rows
// around the cursor prefetched (further ahead while playing). While the scrubber moves, the
// fetch waits for it to rest `settleMs`; a cached frame shows at once. A row the server has no
// frame for (404: a restore's row 0) is marked missing and the nearest row that has one shows.
import { useEffect, useMemo, useRef, useState } from "react";
import { FrameLoader } from "../../lib/replay/frameLoader";
import { frameCount, frameForStep, type FrameChoice, type FrameSource, stepOfFrame } from "../../lib/replay/frames";
import { prefetchRows, prefetchWindow } from "../../lib/replay/prefetch";
import { authFetch } from "../../lib/auth/token";

/** The server has no frame for the row (404). */
class FrameMissingError extends Error {}

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
  const [missing, setMissing] = useState<ReadonlySet<number>>(() => new Set());
  const wanted = useRef<FrameChoice | null>(null);

  const [loader, setLoader] = useState<FrameLoader | null>(null);

  useEffect(() => {
    setShown(null);
    setFailed(null);
    setMissing(new Set());
    if (source.kind === "none") return;
    const made = new FrameLoader({
      fetchFrame: async (row, signal) => {
        const url = `/v0/recordings/${encodeURIComponent(recordingId)}/episodes/${episode}/frames/${row}`;
        const response = await authFetch(url, { signal });
        if (response.status === 404) throw new FrameMissingError(`frame ${row}: the recording has none`);
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
        if (error instanceof FrameMissingError) {
          setMissing((old) => new Set(old).add(row));
          return;
        }
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
    const own = frameForStep(source, step, missing);
    if (!own || stride <= 1) return own;
    const row = Math.floor(own.row / stride) * stride;
    if (row === own.row || missing.has(row)) return own;
    return { row, step: stepOfFrame(source, row) ?? own.step, exact: false };
  }, [source, step, stride, missing]);

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

  /** Every row was asked for and none had a frame. */
  const noneFound = frameCount(source) > 0 && choice === null;
  return { shown, wanted: choice, failed, missing, noneFound };
}
