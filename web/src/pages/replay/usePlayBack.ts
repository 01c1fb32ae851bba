// "Play back": a new session of the recording's environment and kwargs (POST /v0/sessions),
// reset with the episode's recorded seed and reset_options, then every recorded action applied
// over the session's stream with observation "digest" (and a frame now and then to watch), each
// answer judged against the recording (GET .../digests, the recorded rewards and flags). The
// session is closed afterwards, however the run ends.
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { api, must } from "../../api/client";
import { actionArrayNames, recordedActions } from "../../lib/replay/actions";
import { flatNumbers } from "../../lib/replay/arrays";
import { firstDivergentStep, judgeReset, judgeStep, playBackBlocker, type RecordedEpisode, type StepVerdict } from "../../lib/replay/playBack";
import type { PlotSpec } from "../../lib/replay/plotData";
import { openPlayBackLink, type PlayBackLink, type PlayedAnswer } from "./playBackLink";
import { type EpisodeData, errorMessage, type RecordingMeta } from "./replayData";

export type PlayBackPhase = "idle" | "starting" | "playing" | "done" | "stopped" | "error";

export interface PlayBackState {
  phase: PlayBackPhase;
  verdicts: StepVerdict[];
  firstDivergent: number | null;
  error: string | null;
  frameUrl: string | null;
  sessionId: string | null;
  total: number;
  /** Why play back cannot run for this episode (null: it can). */
  blocker: string | null;
  seed: unknown;
  plots: PlotSpec[];
  start: () => void;
  stop: () => void;
}

/** Milliseconds between the frames asked for while playing back (the rest come without). */
const FRAME_EVERY_MS = 100;
/** Milliseconds between updates of the page while playing back. */
const PUBLISH_EVERY_MS = 60;
/** Step commands sent ahead of their answers. */
const PIPELINE = 8;

type Settled = { answer: PlayedAnswer } | { error: unknown };

async function recordedEpisode(meta: RecordingMeta, data: EpisodeData) {
  const path = { recording_id: meta.id, index: data.index };
  const names = [...actionArrayNames(data.arrayNames), "rewards", "terminated", "truncated"];
  const [body, digests] = await Promise.all([
    must(api.GET("/v0/recordings/{recording_id}/episodes/{index}", { params: { path, query: { arrays: names.join(",") } } })),
    must(api.GET("/v0/recordings/{recording_id}/episodes/{index}/digests", { params: { path } })),
  ]);
  const arrays = body.arrays ?? {};
  const flags = (name: string) => (arrays[name] ? flatNumbers(arrays[name]).map((v) => v === 1) : []);
  const recorded: RecordedEpisode = {
    steps: data.steps,
    rewards: arrays.rewards ? flatNumbers(arrays.rewards) : [],
    terminated: flags("terminated"),
    truncated: flags("truncated"),
    digests: (digests as { observations?: string[] }).observations ?? [],
  };
  return { recorded, actions: recordedActions(arrays, meta.raw.action_space) };
}

function verdictPlot(verdicts: readonly StepVerdict[], length: number): PlotSpec {
  const values = new Array<number | null>(length).fill(null);
  for (const v of verdicts) if (v.step >= 1 && v.step <= length) values[v.step - 1] = v.match ? 1 : 0;
  return { id: "play-back", title: "play back: 1 = matches the recording, 0 = diverged", stepped: true, series: [{ label: "match", values }] };
}

export function usePlayBack(meta: RecordingMeta, data: EpisodeData): PlayBackState {
  const [phase, setPhase] = useState<PlayBackPhase>("idle");
  const [verdicts, setVerdicts] = useState<StepVerdict[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [frameUrl, setFrameUrl] = useState<string | null>(null);
  const [sessionId, setSessionId] = useState<string | null>(null);
  const cancel = useRef<(() => void) | null>(null);
  const blocker = useMemo(() => playBackBlocker(data.entry, meta.raw.kwargs), [data.entry, meta.raw.kwargs]);

  const showFrame = useCallback((blob: Blob | null) => {
    if (!blob) return;
    setFrameUrl(URL.createObjectURL(blob)); // the effect below revokes the one it replaces
  }, []);

  const start = useCallback(() => {
    if (blocker || cancel.current) return;
    let stopped = false;
    let link: PlayBackLink | null = null;
    let session: string | null = null;
    const closeSession = () => {
      link?.close();
      link = null;
      if (session !== null) {
        const id = session;
        session = null;
        void api.DELETE("/v0/sessions/{session_id}", { params: { path: { session_id: id } } }).catch(() => {});
      }
    };
    cancel.current = () => {
      stopped = true;
      closeSession();
    };
    setPhase("starting");
    setVerdicts([]);
    setError(null);
    (async () => {
      const { recorded, actions } = await recordedEpisode(meta, data);
      if (stopped) return;
      const kwargs = (typeof meta.raw.kwargs === "object" && meta.raw.kwargs !== null ? meta.raw.kwargs : {}) as Record<string, unknown>;
      const created = await must(api.POST("/v0/sessions", { body: { env_id: meta.envId ?? "", kwargs, record: false, record_frames: false, durable: false, auto_reset: false, closes_with_page: true } }));
      session = created.id;
      setSessionId(created.id);
      if (stopped) return closeSession();
      link = await openPlayBackLink(created.id);
      if (stopped) return closeSession();
      setPhase("playing");
      const seed = typeof data.entry.seed === "number" ? data.entry.seed : null;
      const options = typeof data.entry.reset_options === "object" ? (data.entry.reset_options as Record<string, unknown> | null) : null;
      const reset = await link.reset(seed, options);
      showFrame(reset.frame);
      const out: StepVerdict[] = [judgeReset(recorded, reset.digest)];
      setVerdicts([...out]);
      // Up to PIPELINE steps are on their way at once (the stream answers them in order).
      const inFlight: Promise<Settled>[] = [];
      let sent = 0;
      let lastFrame = performance.now();
      const sendNext = (to: PlayBackLink) => {
        const now = performance.now();
        const withFrame = now - lastFrame >= FRAME_EVERY_MS || sent === actions.length - 1;
        if (withFrame) lastFrame = now;
        inFlight.push(to.step(actions[sent++], withFrame).then((answer) => ({ answer }), (error: unknown) => ({ error })));
      };
      while (sent < actions.length && inFlight.length < PIPELINE) sendNext(link);
      let lastPublish = performance.now();
      for (let i = 0; i < actions.length; i++) {
        const settled = await inFlight.shift()!;
        if (stopped) return;
        if ("error" in settled) throw settled.error;
        const answer = settled.answer;
        const verdict = judgeStep(recorded, i + 1, answer);
        out.push(verdict);
        if (answer.frame) showFrame(answer.frame);
        if (performance.now() - lastPublish >= PUBLISH_EVERY_MS) {
          lastPublish = performance.now();
          setVerdicts([...out]);
        }
        if ((answer.terminated || answer.truncated) && i < actions.length - 1) break; // ended before the recording did
        if (sent < actions.length && link) sendNext(link);
      }
      await Promise.all(inFlight); // steps sent past an early end: their answers (or errors) do not count
      setVerdicts([...out]);
      setPhase("done");
    })()
      .catch((e: unknown) => {
        if (stopped) return;
        setError(errorMessage(e));
        setPhase("error");
      })
      .finally(() => {
        closeSession();
        cancel.current = null;
        if (stopped) setPhase((p) => (p === "done" || p === "error" ? p : "stopped"));
      });
  }, [blocker, meta, data, showFrame]);

  const stop = useCallback(() => {
    cancel.current?.();
    cancel.current = null;
    setPhase((p) => (p === "starting" || p === "playing" ? "stopped" : p));
  }, []);

  useEffect(() => () => { cancel.current?.(); }, []);
  useEffect(() => () => { if (frameUrl) URL.revokeObjectURL(frameUrl); }, [frameUrl]);

  const plots = useMemo(
    () => (verdicts.length > 0 ? [verdictPlot(verdicts, data.steps.length)] : []),
    [verdicts, data.steps.length],
  );

  return {
    phase, verdicts, firstDivergent: firstDivergentStep(verdicts), error, frameUrl, sessionId,
    total: data.steps.length, blocker, seed: data.entry.seed, plots, start, stop,
  };
}
