// A session played in the page: its stream, the live picture (binary JPEG frames as object
// URLs, the old one revoked), the play loop at the control rate with one step in flight, the
// person's controls or the Random agent choosing each action, the episode's count and return,
// in-session snapshots, and the crashed state with the log tail. Hand-controlled arms take the
// hand keys (lib/play/handKeys.ts); a step or reset whose info has a teacher's suggestion can be
// played by the Teacher button or T, once or (following the teacher) at every step.
import { useCallback, useEffect, useRef, useState } from "react";
import { api } from "../../api/client";
import { type ReceivedFrame, SessionStream, StreamError, type StepAnswer, type ResetAnswer } from "../../api/stream";
import { errorText } from "../../lib/errors";
import { actionOf, chooseControls, type ControlValues, type Controls, initialValues } from "../../lib/play/controls";
import { GRIPPER, GRIPPER_KEY, gripperToggled, HAND_KEY_NAMES, handKeyName } from "../../lib/play/handKeys";
import { keyName } from "../../lib/play/keyMap";
import { observationMode } from "../../lib/play/observation";
import { controlRate, RateMeter, StepPacer } from "../../lib/play/pacer";
import { sampleSpace } from "../../lib/play/sampler";
import { randomSeed } from "../../lib/play/seeds";
import { asSpace, flatten, toNumber } from "../../lib/play/spaces";
import { TEACHER_ACTION, TEACHER_KEY, teacherAction } from "../../lib/play/teacher";
import type { SessionInfo } from "./sessionInfo";

export type Phase = "connecting" | "ready" | "crashed" | "closed";
export type Mode = "paused" | "playing" | "random";
/** Who chose a step's action: the person's controls, the Random agent or the teacher's suggestion. */
export type ActedBy = "you" | "random" | "teacher";

export interface EpisodeView {
  step: number;
  episodeReturn: number;
  reward: number | string | null;
  ended: "terminated" | "truncated" | null;
  info: Record<string, unknown> | null;
  observation: unknown;
  observationLabels: Record<string, number[]> | null;
  seed: number | null;
  /** How the episode began: "reset" with the seed, or "resumed" from a saved snapshot. */
  origin: string;
  lastAction: unknown;
  lastActedBy: ActedBy | null;
}

export interface InSessionSnapshot {
  handle: string;
  number: number;
  view: EpisodeView;
}

const FRESH: EpisodeView = {
  step: 0, episodeReturn: 0, reward: null, ended: null, info: null, observation: null, observationLabels: null,
  seed: null, origin: "", lastAction: null, lastActedBy: null,
};

export function usePlay(session: SessionInfo, resumeFrom: string | null) {
  const [controls] = useState<Controls>(() => chooseControls(asSpace(session.action_space), session.metadata, session.kwargs?.camera));
  const actionSpace = asSpace(session.action_space);
  const observation = observationMode(asSpace(session.observation_space));
  const rate = controlRate(session.metadata);

  const [phase, setPhase] = useState<Phase>("connecting");
  const [mode, setModeState] = useState<Mode>("paused");
  const [view, setView] = useState<EpisodeView>(FRESH);
  const [frameUrl, setFrameUrl] = useState<string | null>(null);
  const [frameSize, setFrameSize] = useState<{ width: number; height: number } | null>(null);
  const [values, setValuesState] = useState<ControlValues>(() => initialValues(controls));
  const [error, setError] = useState<string | null>(null);
  const [logTail, setLogTail] = useState<string | null>(null);
  const [crashReason, setCrashReason] = useState<string | null>(null);
  const [closedReason, setClosedReason] = useState<string | null>(null);
  const [fps, setFps] = useState(0);
  const [autoReset, setAutoResetState] = useState(false);
  const [stepping, setStepping] = useState(false); // a step in flight (Step waits for its answer)
  const [snapshots, setSnapshots] = useState<InSessionSnapshot[]>([]);
  // Seconds the environment took for the last restore (Doom replays its episode), null: none yet.
  const [restoreSeconds, setRestoreSeconds] = useState<number | null>(null);
  const [followTeacher, setFollowTeacherState] = useState(false);

  const stream = useRef<SessionStream | null>(null);
  const pacer = useRef(new StepPacer(rate));
  const meter = useRef(new RateMeter());
  const modeRef = useRef<Mode>("paused");
  const viewRef = useRef<EpisodeView>(FRESH);
  const valuesRef = useRef<ControlValues>(values);
  const down = useRef(new Set<string>());
  const pressed = useRef(new Set<string>());
  const timer = useRef<number | null>(null);
  const autoResetRef = useRef(false);
  const frameRef = useRef<string | null>(null);
  const busy = useRef(false); // a reset, restore or single step under way
  const teacherOnce = useRef(false); // the next step plays the teacher's suggestion
  const followTeacherRef = useRef(false);
  const hand = controls.kind === "levels" || controls.kind === "sliders" ? controls.hand : null;

  const showFrame = useCallback((frame: ReceivedFrame | null) => {
    if (!frame) return;
    const url = URL.createObjectURL(frame.blob);
    const old = frameRef.current;
    frameRef.current = url;
    setFrameUrl(url);
    setFrameSize((size) => (size && size.width === frame.width && size.height === frame.height ? size : { width: frame.width, height: frame.height }));
    if (old) URL.revokeObjectURL(old);
  }, []);

  const publish = useCallback((next: EpisodeView) => {
    viewRef.current = next;
    setView(next);
  }, []);

  const setMode = useCallback((next: Mode) => {
    modeRef.current = next;
    setModeState(next);
    if (next === "paused" && timer.current !== null) {
      window.clearTimeout(timer.current);
      timer.current = null;
    }
  }, []);

  /** The session went away (410, close 4410): crashed, with the log tail, or closed (e.g. elsewhere). */
  const crashed = useCallback(async (tail: string | null, reason: string | null) => {
    setMode("paused");
    let text = tail;
    if (!text) {
      const { data } = await api.GET("/v0/sessions/{session_id}", { params: { path: { session_id: session.id } } });
      if (data?.state === "closed") {
        setClosedReason(data.reason ?? reason);
        setPhase("closed");
        return;
      }
      text = data?.log_tail ?? null;
      reason = reason ?? data?.reason ?? null;
    }
    setPhase("crashed");
    if (frameRef.current) URL.revokeObjectURL(frameRef.current);
    frameRef.current = null;
    setFrameUrl(null);
    setCrashReason(reason);
    setLogTail(text ?? "(no log lines)");
  }, [session.id, setMode]);

  const failed = useCallback((e: unknown) => {
    if (e instanceof StreamError && e.status === 410) {
      void crashed(e.logTail, e.message);
      return;
    }
    if (e instanceof StreamError && e.status === 499) return; // the page closed the stream
    setMode("paused");
    setError(errorText(e));
  }, [crashed, setMode]);

  const began = useCallback((answer: ResetAnswer, frame: ReceivedFrame | null, seed: number | null, origin: string) => {
    showFrame(frame);
    publish({
      ...FRESH, seed, origin, info: answer.info, observation: answer.observation,
      observationLabels: answer.observation_labels ?? session.observation_labels ?? null,
    });
  }, [publish, session.observation_labels, showFrame]);

  const reset = useCallback(async () => {
    const s = stream.current;
    if (!s) return;
    const seed = randomSeed();
    busy.current = true;
    try {
      const { result, frame } = await s.reset({ seed, frame: true, observation });
      setError(null);
      began(result, frame, seed, `reset with seed ${seed}`);
    } finally {
      busy.current = false;
    }
  }, [began, observation]);

  const setValue = useCallback((index: number, value: number) => {
    const next = [...valuesRef.current];
    next[index] = value;
    valuesRef.current = next;
    setValuesState(next);
  }, []);

  /**
   * The action for this step and who chose it: the teacher's suggestion (asked for once, or
   * followed, when the latest info has one), the Random agent's, or what the controls and keys
   * say. After a teacher's step a hand-controlled gripper holds the teacher's, so taking over
   * does not drop what it holds.
   */
  const nextAction = useCallback((): { action: unknown; by: ActedBy } => {
    if (teacherOnce.current || followTeacherRef.current) {
      const suggestion = teacherAction(viewRef.current.info, actionSpace);
      teacherOnce.current = false;
      if (suggestion !== null) {
        pressed.current.clear();
        if (hand) setValue(GRIPPER, flatten(suggestion)[GRIPPER] ?? 0);
        return { action: suggestion, by: "teacher" };
      }
    }
    if (modeRef.current === "random" && actionSpace) return { action: sampleSpace(actionSpace), by: "random" };
    const keys = new Set([...down.current, ...pressed.current]);
    pressed.current.clear();
    const action = actionOf(controls, valuesRef.current, keys);
    if (controls.kind === "keys") valuesRef.current = [Number(action)];
    return { action, by: "you" };
  }, [actionSpace, controls, hand, setValue]);

  const applyStep = useCallback((answer: StepAnswer, frame: ReceivedFrame | null, action: unknown, by: ActedBy) => {
    showFrame(frame);
    meter.current.tick(performance.now());
    const before = viewRef.current;
    const reward = answer.reward;
    const ended = answer.terminated ? "terminated" : answer.truncated ? "truncated" : null;
    publish({
      ...before,
      step: before.step + 1,
      episodeReturn: before.episodeReturn + toNumber(reward),
      reward,
      ended,
      info: answer.info,
      observation: answer.observation,
      observationLabels: answer.observation_labels ?? before.observationLabels,
      lastAction: action,
      lastActedBy: by,
    });
    return ended;
  }, [publish, showFrame]);

  /** One step; resolves with whether the loop may go on. */
  const stepOnce = useCallback(async (): Promise<boolean> => {
    const s = stream.current;
    if (!s || s.state !== "open" || viewRef.current.ended || pacer.current.busy) return false;
    const { action, by } = nextAction();
    pacer.current.sent(performance.now());
    setStepping(true);
    try {
      const { result, frame } = await s.step({ action, frame: true, observation });
      const ended = applyStep(result, frame, action, by);
      if (ended && autoResetRef.current && modeRef.current !== "paused") {
        await reset();
        return true;
      }
      return ended === null;
    } catch (e) {
      failed(e);
      return false;
    } finally {
      pacer.current.answered();
      setStepping(false);
    }
  }, [applyStep, failed, nextAction, observation, reset]);

  const loop = useCallback(() => {
    timer.current = null;
    if (modeRef.current === "paused") return;
    const wait = pacer.current.delay(performance.now());
    if (wait === null) return; // the answer in flight calls the loop again
    if (wait > 0) {
      timer.current = window.setTimeout(loop, wait);
      return;
    }
    void stepOnce().then((goOn) => {
      if (!goOn) {
        if (modeRef.current !== "paused") setMode("paused");
        return;
      }
      loop();
    });
  }, [setMode, stepOnce]);

  const play = useCallback((as: "playing" | "random" = "playing") => {
    if (phase !== "ready" || viewRef.current.ended) return;
    const wasPaused = modeRef.current === "paused";
    setMode(as);
    if (wasPaused) loop();
  }, [loop, phase, setMode]);

  const pause = useCallback(() => setMode("paused"), [setMode]);

  const step = useCallback(() => {
    if (modeRef.current !== "paused" || busy.current) return;
    void stepOnce();
  }, [stepOnce]);

  const resetNow = useCallback(() => {
    if (busy.current) return;
    const wasPlaying = modeRef.current;
    setMode("paused");
    void reset().then(() => { if (wasPlaying !== "paused") play(wasPlaying); }, failed);
  }, [failed, play, reset, setMode]);

  /** Plays the teacher's suggestion: at once when paused, else as the next step's action. */
  const playTeacher = useCallback(() => {
    if (phase !== "ready" || viewRef.current.ended) return;
    if (teacherAction(viewRef.current.info, actionSpace) === null) return;
    teacherOnce.current = true;
    if (modeRef.current === "paused" && !busy.current) void stepOnce();
  }, [actionSpace, phase, stepOnce]);

  const setFollowTeacher = useCallback((on: boolean) => {
    followTeacherRef.current = on;
    setFollowTeacherState(on);
  }, []);

  const setAutoReset = useCallback((on: boolean) => {
    autoResetRef.current = on;
    setAutoResetState(on);
  }, []);

  const takeSnapshot = useCallback(async () => {
    const s = stream.current;
    if (!s) return;
    try {
      const { result } = await s.snapshot();
      setSnapshots((list) => [...list, { handle: result.handle, number: list.length + 1, view: viewRef.current }]);
    } catch (e) {
      failed(e);
    }
  }, [failed]);

  const restoreSnapshot = useCallback(async (snapshot: InSessionSnapshot) => {
    const s = stream.current;
    if (!s || busy.current) return;
    setMode("paused");
    busy.current = true;
    try {
      const { result, frame } = await s.restore(snapshot.handle, { frame: true, observation });
      setRestoreSeconds(result.restore_s ?? null);
      showFrame(frame);
      publish({ ...snapshot.view, info: result.info, observation: result.observation });
      setError(null);
    } catch (e) {
      failed(e);
    } finally {
      busy.current = false;
    }
  }, [failed, observation, publish, setMode, showFrame]);

  const saveSnapshot = useCallback(async (label: string) => {
    const s = stream.current;
    if (!s) throw new Error("the session's stream is not open");
    return (await s.saveSnapshot(label)).result;
  }, []);

  /** Closes the stream and the session (DELETE); the page shows it closed. */
  const closeSession = useCallback(async () => {
    setMode("paused");
    stream.current?.close();
    await api.DELETE("/v0/sessions/{session_id}", { params: { path: { session_id: session.id } } });
    setPhase("closed");
  }, [session.id, setMode]);

  // The stream: opened once, its first episode begun (reset, or the saved snapshot restored).
  useEffect(() => {
    let live = true;
    let opened: SessionStream | null = null;
    SessionStream.open(session.id)
      .then(async (s) => {
        opened = s;
        if (!live) return s.close();
        stream.current = s;
        s.onState((state) => {
          if (state === "crashed") void crashed(s.logTail, s.reason);
          else if (state === "closed" && live) setPhase((p) => (p === "crashed" ? p : "closed"));
        });
        if (resumeFrom) {
          const { result, frame } = await s.restoreSaved(resumeFrom, { frame: true, observation });
          began(result, frame, null, `resumed from saved snapshot ${resumeFrom}`);
        } else {
          await reset();
        }
        if (live) setPhase("ready");
      })
      .catch((e: unknown) => { if (live) failed(e); });
    return () => {
      live = false;
      if (timer.current !== null) window.clearTimeout(timer.current);
      modeRef.current = "paused";
      opened?.close();
      stream.current = null;
      if (frameRef.current) URL.revokeObjectURL(frameRef.current);
      frameRef.current = null;
    };
  }, [session.id]);

  // Keys: held and pressed since the last step, for Discrete key maps and hand control; Space
  // toggles a hand's gripper, T plays the teacher's suggestion (not while typing).
  const playTeacherRef = useRef(playTeacher);
  playTeacherRef.current = playTeacher;
  useEffect(() => {
    const mapped: ReadonlySet<string> = controls.kind === "keys" ? controls.keyMap.keys : hand ? HAND_KEY_NAMES : new Set();
    const nameOf = hand ? handKeyName : keyName;
    const typing = (target: EventTarget | null) =>
      target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
    const onDown = (event: KeyboardEvent) => {
      if (typing(event.target) || event.ctrlKey || event.metaKey || event.altKey) return;
      const key = nameOf(event.key);
      if (!mapped.has(key) && key.toLowerCase() === TEACHER_KEY) {
        if (event.repeat) return;
        event.preventDefault();
        playTeacherRef.current();
        return;
      }
      if (!mapped.has(key)) return;
      event.preventDefault();
      if (hand && key === GRIPPER_KEY) {
        if (!event.repeat) setValue(GRIPPER, gripperToggled(hand, valuesRef.current[GRIPPER]));
        return;
      }
      down.current.add(key);
      pressed.current.add(key);
    };
    const onUp = (event: KeyboardEvent) => {
      const key = nameOf(event.key);
      down.current.delete(key);
      if (mapped.has(key) && !typing(event.target)) event.preventDefault();
    };
    const onBlur = () => down.current.clear();
    window.addEventListener("keydown", onDown);
    window.addEventListener("keyup", onUp);
    window.addEventListener("blur", onBlur);
    return () => {
      window.removeEventListener("keydown", onDown);
      window.removeEventListener("keyup", onUp);
      window.removeEventListener("blur", onBlur);
    };
  }, [controls, hand, setValue]);

  // Frames shown a second, while playing.
  useEffect(() => {
    if (mode === "paused") return;
    const id = window.setInterval(() => setFps(meter.current.rate(performance.now())), 500);
    return () => window.clearInterval(id);
  }, [mode]);

  return {
    controls, rate, observationMode: observation, phase, mode, view, frameUrl, frameSize, values, error, logTail, crashReason, closedReason, fps,
    autoReset, snapshots, restoreSeconds, actionSpace, stepping, hand, followTeacher,
    teacherSuggestion: teacherAction(view.info, actionSpace),
    hasTeacher: view.info !== null && TEACHER_ACTION in view.info,
    play, pause, step, reset: resetNow, setValue, setAutoReset, takeSnapshot, restoreSnapshot, saveSnapshot, closeSession,
    playTeacher, setFollowTeacher,
    dismissError: () => setError(null),
  };
}

export type Play = ReturnType<typeof usePlay>;
