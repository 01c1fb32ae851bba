import { describe, expect, it } from "vitest";
import type { StepAnswer } from "../../api/stream";
import { FRESH_EPISODE, initialPlayState, type InSessionSnapshot, nextPlayState, NO_LOG_LINES, type PlayEvent, type PlayState } from "./playState";

const initial = initialPlayState([0, 0]);

function after(...events: PlayEvent[]): PlayState {
  return events.reduce(nextPlayState, initial);
}

function stepAnswer(fields: Partial<StepAnswer> = {}): StepAnswer {
  return {
    frame: null, info: { x: 1 }, observation: [0.5], observation_digest: null, observation_labels: null,
    reward: 1, terminated: false, truncated: false, warnings: [], ...fields,
  };
}

const began: PlayEvent = {
  type: "episodeBegan", seed: 7, origin: "reset with seed 7", info: { teacher_action: 1 }, observation: [0], observationLabels: { x: [0] },
};

describe("initialPlayState", () => {
  it("connecting, paused, a fresh episode, the controls' values", () => {
    expect(initial).toMatchObject({
      phase: "connecting", mode: "paused", view: FRESH_EPISODE, frameUrl: null, frameSize: null, values: [0, 0], error: null,
      fps: 0, autoReset: false, stepping: false, pending: null, snapshots: [], restoreSeconds: null, followTeacher: false,
    });
  });
});

describe("nextPlayState", () => {
  it("modeChanged sets the mode; the same mode leaves the state as it was", () => {
    expect(after({ type: "modeChanged", mode: "random" }).mode).toBe("random");
    expect(nextPlayState(initial, { type: "modeChanged", mode: "paused" })).toBe(initial);
  });

  it("ready: the session can be played", () => {
    expect(after({ type: "ready" }).phase).toBe("ready");
  });

  it("episodeBegan starts a fresh episode with its seed, origin and first answer", () => {
    const state = after({ type: "stepped", answer: stepAnswer(), action: 1, by: "you" }, began);
    expect(state.view).toEqual({
      ...FRESH_EPISODE, seed: 7, origin: "reset with seed 7", info: { teacher_action: 1 }, observation: [0], observationLabels: { x: [0] },
    });
  });

  it("stepped counts the step, adds the reward and keeps who acted", () => {
    const state = after(
      began,
      { type: "stepped", answer: stepAnswer({ reward: 1.5 }), action: [1, 2], by: "you" },
      { type: "stepped", answer: stepAnswer({ reward: "2" }), action: [0, 1], by: "teacher" },
    );
    expect(state.view).toMatchObject({
      step: 2, episodeReturn: 3.5, reward: "2", ended: null, info: { x: 1 }, observation: [0.5], lastAction: [0, 1], lastActedBy: "teacher",
      seed: 7, observationLabels: { x: [0] }, // labels carry on when an answer has none
    });
  });

  it("stepped ends the episode, terminated before truncated", () => {
    expect(after({ type: "stepped", answer: stepAnswer({ terminated: true, truncated: true }), action: 0, by: "random" }).view.ended).toBe("terminated");
    expect(after({ type: "stepped", answer: stepAnswer({ truncated: true }), action: 0, by: "random" }).view.ended).toBe("truncated");
    const labelled = after({ type: "stepped", answer: stepAnswer({ observation_labels: { y: [1] } }), action: 0, by: "you" });
    expect(labelled.view.observationLabels).toEqual({ y: [1] });
  });

  it("commandStarted and commandFinished: a command in flight, since when", () => {
    const inFlight = after({ type: "commandStarted", command: "step", at: 1234 });
    expect(inFlight).toMatchObject({ stepping: true, pending: { command: "step", since: 1234 } });
    expect(nextPlayState(inFlight, { type: "commandFinished" })).toMatchObject({ stepping: false, pending: null });
    expect(nextPlayState(initial, { type: "commandFinished" })).toBe(initial);
    expect(after({ type: "commandStarted", command: "reset", at: 5 })).toMatchObject({ stepping: false, pending: { command: "reset" } });
  });

  it("frameShown shows the picture, keeping the size's object when the size is the same", () => {
    const first = after({ type: "frameShown", url: "blob:1", size: { width: 160, height: 120 } });
    expect(first).toMatchObject({ frameUrl: "blob:1", frameSize: { width: 160, height: 120 } });
    const second = nextPlayState(first, { type: "frameShown", url: "blob:2", size: { width: 160, height: 120 } });
    expect(second.frameUrl).toBe("blob:2");
    expect(second.frameSize).toBe(first.frameSize);
    expect(nextPlayState(second, { type: "frameShown", url: "blob:3", size: { width: 320, height: 240 } }).frameSize).toEqual({ width: 320, height: 240 });
  });

  it("frameDropped: no picture", () => {
    expect(after({ type: "frameShown", url: "blob:1", size: { width: 1, height: 1 } }, { type: "frameDropped" }).frameUrl).toBeNull();
    expect(nextPlayState(initial, { type: "frameDropped" })).toBe(initial);
  });

  it("valueSet changes one control's value, in a new list", () => {
    const state = after({ type: "valueSet", index: 1, value: 0.25 });
    expect(state.values).toEqual([0, 0.25]);
    expect(initial.values).toEqual([0, 0]);
    expect(nextPlayState(state, { type: "valueSet", index: 1, value: 0.25 })).toBe(state);
  });

  it("autoResetSet, followTeacherSet and fpsMeasured set their figures", () => {
    expect(after({ type: "autoResetSet", on: true }).autoReset).toBe(true);
    expect(after({ type: "followTeacherSet", on: true }).followTeacher).toBe(true);
    expect(after({ type: "fpsMeasured", fps: 28 }).fps).toBe(28);
  });

  it("failed shows the error until errorCleared", () => {
    const failed = after({ type: "failed", message: "action: out of range" });
    expect(failed.error).toBe("action: out of range");
    expect(nextPlayState(failed, { type: "errorCleared" }).error).toBeNull();
    expect(nextPlayState(initial, { type: "errorCleared" })).toBe(initial);
  });

  it("snapshotTaken numbers the snapshots and keeps the episode as it was then", () => {
    const state = after(
      began,
      { type: "snapshotTaken", handle: "h1" },
      { type: "stepped", answer: stepAnswer(), action: 0, by: "you" },
      { type: "snapshotTaken", handle: "h2" },
    );
    expect(state.snapshots.map((s) => [s.handle, s.number, s.view.step])).toEqual([["h1", 1, 0], ["h2", 2, 1]]);
  });

  it("snapshotRestored goes back to the snapshot's episode with the restore's answer, and clears the error", () => {
    const snapshot: InSessionSnapshot = { handle: "h1", number: 1, view: { ...FRESH_EPISODE, step: 4, episodeReturn: 4, seed: 7 } };
    const state = after(
      { type: "failed", message: "old" },
      { type: "snapshotRestored", snapshot, info: { restored: true }, observation: [9], restoreSeconds: 0.02 },
    );
    expect(state.view).toEqual({ ...snapshot.view, info: { restored: true }, observation: [9] });
    expect(state.restoreSeconds).toBe(0.02);
    expect(state.error).toBeNull();
  });

  it("crashed shows the log tail instead of the picture", () => {
    const state = after({ type: "frameShown", url: "blob:1", size: { width: 1, height: 1 } }, { type: "crashed", reason: "segfault", logTail: "line 1" });
    expect(state).toMatchObject({ phase: "crashed", frameUrl: null, crashReason: "segfault", logTail: "line 1" });
    expect(after({ type: "crashed", reason: null, logTail: null }).logTail).toBe(NO_LOG_LINES);
  });

  it("sessionClosed: closed, with the reason when one is known", () => {
    const closed = after({ type: "sessionClosed", reason: "closed elsewhere" });
    expect(closed).toMatchObject({ phase: "closed", closedReason: "closed elsewhere" });
    expect(nextPlayState(closed, { type: "sessionClosed" }).closedReason).toBe("closed elsewhere");
  });

  it("streamClosed: closed, unless the session crashed", () => {
    expect(after({ type: "ready" }, { type: "streamClosed" }).phase).toBe("closed");
    const crashed = after({ type: "crashed", reason: null, logTail: "x" });
    expect(nextPlayState(crashed, { type: "streamClosed" })).toBe(crashed);
  });
});
