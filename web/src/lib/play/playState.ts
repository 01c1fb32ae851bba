// What the Session page shows of a session played in it, and how each event changes it: a pure
// reducer (nextPlayState) that the session player (sessionPlayer.ts) feeds from its stream's
// answers and the person's clicks. Where the play loop is (connecting, ready, crashed or closed;
// paused, playing or the Random agent), the episode so far, the live picture, the controls'
// values, the in-session snapshots, the command in flight (a slow step shows its time) and the
// last error.
import type { StepAnswer } from "../../api/stream";
import type { ControlValues } from "./controls";
import { toNumber } from "./spaces";

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

/** A command the page waits for: a step, reset or restore on the stream, or the close (DELETE). */
export type Command = "step" | "reset" | "restore" | "close";

/** The command in flight and when it was sent (performance.now(), ms). */
export interface PendingCommand {
  command: Command;
  since: number;
}

export interface InSessionSnapshot {
  handle: string;
  number: number;
  view: EpisodeView;
}

export interface FrameSize {
  width: number;
  height: number;
}

export interface PlayState {
  phase: Phase;
  mode: Mode;
  view: EpisodeView;
  /** The live picture's object URL (its owner revokes the one it replaces), null: none. */
  frameUrl: string | null;
  frameSize: FrameSize | null;
  /** What the controls hold (sliders, levels, toggles), by index. */
  values: ControlValues;
  error: string | null;
  logTail: string | null;
  crashReason: string | null;
  closedReason: string | null;
  /** Frames shown a second while playing. */
  fps: number;
  autoReset: boolean;
  /** A step in flight (Step waits for its answer). */
  stepping: boolean;
  /** The command in flight, shown with its time once it takes long (a slow step); null: none. */
  pending: PendingCommand | null;
  snapshots: InSessionSnapshot[];
  /** Seconds the environment took for the last restore (Doom replays its episode), null: none yet. */
  restoreSeconds: number | null;
  followTeacher: boolean;
}

export type PlayEvent =
  | { type: "modeChanged"; mode: Mode }
  /** The first episode began: the session can be played. */
  | { type: "ready" }
  | {
      type: "episodeBegan";
      seed: number | null;
      origin: string;
      info: Record<string, unknown>;
      observation: unknown;
      observationLabels: Record<string, number[]> | null;
    }
  /** A command was sent at `at` (performance.now(), ms). */
  | { type: "commandStarted"; command: Command; at: number }
  | { type: "stepped"; answer: StepAnswer; action: unknown; by: ActedBy }
  /** The command in flight was answered (or failed). */
  | { type: "commandFinished" }
  | { type: "frameShown"; url: string; size: FrameSize }
  /** The picture is gone (its URL revoked). */
  | { type: "frameDropped" }
  | { type: "valueSet"; index: number; value: number }
  | { type: "autoResetSet"; on: boolean }
  | { type: "followTeacherSet"; on: boolean }
  | { type: "fpsMeasured"; fps: number }
  | { type: "failed"; message: string }
  | { type: "errorCleared" }
  | { type: "snapshotTaken"; handle: string }
  | {
      type: "snapshotRestored";
      snapshot: InSessionSnapshot;
      info: Record<string, unknown>;
      observation: unknown;
      restoreSeconds: number | null;
    }
  /** The environment crashed: its last log lines instead of the picture. */
  | { type: "crashed"; reason: string | null; logTail: string | null }
  /** The session is closed (by the page, or found closed); `reason` when one is known. */
  | { type: "sessionClosed"; reason?: string | null }
  /** The stream closed under the page: the session is closed unless it crashed. */
  | { type: "streamClosed" };

/** An episode before its first answer. */
export const FRESH_EPISODE: EpisodeView = {
  step: 0, episodeReturn: 0, reward: null, ended: null, info: null, observation: null, observationLabels: null,
  seed: null, origin: "", lastAction: null, lastActedBy: null,
};

export const NO_LOG_LINES = "(no log lines)";

/** The state of a session not yet connected, its controls holding `values`. */
export function initialPlayState(values: ControlValues): PlayState {
  return {
    phase: "connecting", mode: "paused", view: FRESH_EPISODE, frameUrl: null, frameSize: null, values, error: null,
    logTail: null, crashReason: null, closedReason: null, fps: 0, autoReset: false, stepping: false, pending: null, snapshots: [],
    restoreSeconds: null, followTeacher: false,
  };
}

/** `state` with `changes`, or `state` itself when they change nothing (so no one re-renders). */
function withChanges(state: PlayState, changes: Partial<PlayState>): PlayState {
  const keys = Object.keys(changes) as (keyof PlayState)[];
  return keys.some((key) => !Object.is(state[key], changes[key])) ? { ...state, ...changes } : state;
}

/** The episode after a step's answer: one step more, its reward added to the return. */
function steppedView(before: EpisodeView, answer: StepAnswer, action: unknown, by: ActedBy): EpisodeView {
  return {
    ...before,
    step: before.step + 1,
    episodeReturn: before.episodeReturn + toNumber(answer.reward),
    reward: answer.reward,
    ended: answer.terminated ? "terminated" : answer.truncated ? "truncated" : null,
    info: answer.info,
    observation: answer.observation,
    observationLabels: answer.observation_labels ?? before.observationLabels,
    lastAction: action,
    lastActedBy: by,
  };
}

function sameSize(a: FrameSize | null, b: FrameSize): boolean {
  return a !== null && a.width === b.width && a.height === b.height;
}

export function nextPlayState(state: PlayState, event: PlayEvent): PlayState {
  switch (event.type) {
    case "modeChanged":
      return withChanges(state, { mode: event.mode });
    case "ready":
      return withChanges(state, { phase: "ready" });
    case "episodeBegan": {
      const { seed, origin, info, observation, observationLabels } = event;
      return { ...state, view: { ...FRESH_EPISODE, seed, origin, info, observation, observationLabels } };
    }
    case "commandStarted":
      return { ...state, stepping: event.command === "step", pending: { command: event.command, since: event.at } };
    case "stepped":
      return { ...state, view: steppedView(state.view, event.answer, event.action, event.by) };
    case "commandFinished":
      return withChanges(state, { stepping: false, pending: null });
    case "frameShown":
      // the same size keeps its object, so the picture's layout is not touched
      return withChanges(state, { frameUrl: event.url, frameSize: sameSize(state.frameSize, event.size) ? state.frameSize : event.size });
    case "frameDropped":
      return withChanges(state, { frameUrl: null });
    case "valueSet": {
      if (Object.is(state.values[event.index], event.value)) return state;
      const values = [...state.values];
      values[event.index] = event.value;
      return { ...state, values };
    }
    case "autoResetSet":
      return withChanges(state, { autoReset: event.on });
    case "followTeacherSet":
      return withChanges(state, { followTeacher: event.on });
    case "fpsMeasured":
      return withChanges(state, { fps: event.fps });
    case "failed":
      return withChanges(state, { error: event.message });
    case "errorCleared":
      return withChanges(state, { error: null });
    case "snapshotTaken": {
      const snapshot = { handle: event.handle, number: state.snapshots.length + 1, view: state.view };
      return { ...state, snapshots: [...state.snapshots, snapshot] };
    }
    case "snapshotRestored":
      return {
        ...state,
        view: { ...event.snapshot.view, info: event.info, observation: event.observation },
        restoreSeconds: event.restoreSeconds,
        error: null,
      };
    case "crashed":
      return { ...state, phase: "crashed", frameUrl: null, crashReason: event.reason, logTail: event.logTail ?? NO_LOG_LINES };
    case "sessionClosed":
      return withChanges(state, event.reason === undefined ? { phase: "closed" } : { phase: "closed", closedReason: event.reason });
    case "streamClosed":
      return state.phase === "crashed" ? state : withChanges(state, { phase: "closed" });
  }
}
