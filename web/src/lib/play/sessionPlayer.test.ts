import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Schemas } from "../../api/client";
import {
  type FrameOptions, type ReceivedFrame, type ResetCommand, type StepAnswer, type StepCommand, type StreamReply, StreamError,
  type StreamState,
} from "../../api/stream";
import { NO_LOG_LINES } from "./playState";
import { FPS_INTERVAL_MS, type PlayPlatform, type PlayStream, SessionPlayer } from "./sessionPlayer";

type Session = Schemas["SessionPublic"];

function reply<R>(op: string, result: R, frame: ReceivedFrame | null = null): Promise<StreamReply<R>> {
  return Promise.resolve({ id: 1, op, result, frame });
}

function frame(width = 160, height = 120): ReceivedFrame {
  return { width, height, size: 3, mime: "image/jpeg", blob: new Blob([new Uint8Array([1, 2, 3])], { type: "image/jpeg" }) };
}

/** The session's stream as the gateway would answer it: every command answered at once. */
class FakeStream implements PlayStream {
  state: StreamState = "open";
  logTail: string | null = null;
  reason: string | null = null;
  resets: ResetCommand[] = [];
  steps: StepCommand[] = [];
  restores: { handle: string; options: Omit<FrameOptions, "handle"> }[] = [];
  saved: string[] = [];
  /** The answer to each step (by its number, from 1), or the error it fails with. */
  answerStep: (n: number) => StepAnswer | Error = () => stepAnswer();
  frames = false;
  info: Record<string, unknown> = {};
  /** What `useBinarySteps` was asked for: the action space and labels. */
  binaryAsked: [unknown, unknown][] = [];
  private listeners = new Set<(state: StreamState) => void>();

  onState(listener: (state: StreamState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  becomes(state: StreamState): void {
    this.state = state;
    for (const listener of [...this.listeners]) listener(state);
  }

  reset(command: ResetCommand = {}) {
    this.resets.push(command);
    const result = { frame: null, info: this.info, observation: [0], observation_digest: null, observation_labels: null };
    return reply("reset", result, this.frames ? frame() : null);
  }

  step(command: StepCommand) {
    this.steps.push(command);
    const answer = this.answerStep(this.steps.length);
    if (answer instanceof Error) return Promise.reject(answer);
    return reply("step", answer, this.frames ? frame() : null);
  }

  snapshot() {
    return reply("snapshot", { handle: `h${this.steps.length}` } as Schemas["SnapshotResult"]);
  }

  restore(handle: string, options: Omit<FrameOptions, "handle"> = {}) {
    this.restores.push({ handle, options });
    return reply("restore", { frame: null, info: { restored: handle }, observation: [1], observation_digest: null, observation_labels: null, restore_s: 0.5 });
  }

  saveSnapshot(label: string) {
    this.saved.push(label);
    return reply("save_snapshot", { id: "snap-1", label } as Schemas["SavedSnapshotPublic"]);
  }

  restoreSaved(snapshotId: string, options: Omit<FrameOptions, "handle"> = {}) {
    this.restores.push({ handle: snapshotId, options });
    return reply("restore_saved", { frame: null, info: {}, observation: [2], observation_digest: null, observation_labels: null, restore_s: 1 });
  }

  close(): void {
    if (this.state === "open") this.becomes("closed");
  }

  useBinarySteps(actionSpace: unknown, labels: unknown = null): boolean {
    this.binaryAsked.push([actionSpace, labels]);
    return true;
  }
}

function stepAnswer(fields: Partial<StepAnswer> = {}): StepAnswer {
  return { frame: null, info: {}, observation: [0], observation_digest: null, observation_labels: null, reward: 1, terminated: false, truncated: false, warnings: [], ...fields };
}

const BOX = { type: "box", shape: [2], low: -1, high: 1, dtype: "float32" };
const HAND_STEPS = { type: "multi_discrete", nvec: [5, 5, 5, 2] };

function sessionOf(fields: Partial<Session> = {}): Session {
  return {
    id: "s-1", env_id: "test", action_space: BOX, observation_space: { type: "box", shape: [3] }, metadata: { control_rate: 10 }, ...fields,
  } as Session;
}

function platformWith(stream: FakeStream, session: Partial<Session> | undefined = undefined) {
  return {
    openStream: vi.fn(async () => stream),
    readSession: vi.fn(async () => (session === undefined ? undefined : sessionOf(session))),
    deleteSession: vi.fn(async () => {}),
  } satisfies PlayPlatform;
}

/** Lets the answers already given come in (and the timers due by then run). */
async function settle(ms = 0): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
}

async function started(fields: Partial<Session> = {}, stream = new FakeStream(), resumeFrom: string | null = null) {
  const platform = platformWith(stream);
  const player = new SessionPlayer(sessionOf(fields), resumeFrom, platform);
  player.start();
  await settle();
  return { player, stream, platform };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "performance", "Date"] });
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe("SessionPlayer: the stream's life", () => {
  it("opens the stream and resets with a seed of its own; then the session is ready", async () => {
    const { player, stream } = await started({ observation_labels: { x: [0] } });
    expect(stream.resets).toHaveLength(1);
    const { seed, frame: wantsFrame, observation } = stream.resets[0];
    expect(wantsFrame).toBe(true);
    expect(observation).toBe("full");
    const state = player.getState();
    expect(state.phase).toBe("ready");
    expect(state.view).toMatchObject({ seed, origin: `reset with seed ${seed}`, step: 0, observation: [0], observationLabels: { x: [0] } });
  });

  it("asks for binary steps when it shows the whole observation, never for pictures", async () => {
    const small = await started({ observation_labels: { x: [0, 3] } });
    expect(small.stream.binaryAsked).toEqual([[BOX, { x: [0, 3] }]]);
    const picture = await started({ observation_space: { type: "box", dtype: "uint8", shape: [84, 84, 3] } });
    expect(picture.stream.binaryAsked).toEqual([]);
  });

  it("resumes from a saved snapshot instead of resetting", async () => {
    const { player, stream } = await started({}, new FakeStream(), "snap-7");
    expect(stream.resets).toHaveLength(0);
    expect(stream.restores).toEqual([{ handle: "snap-7", options: { frame: true, observation: "full" } }]);
    expect(player.getState().view).toMatchObject({ seed: null, origin: "resumed from saved snapshot snap-7", observation: [2] });
    expect(player.getState().phase).toBe("ready");
  });

  it("a stream that cannot open is an error", async () => {
    const platform = { ...platformWith(new FakeStream()), openStream: vi.fn(async () => Promise.reject(new StreamError(503, "unavailable", "no stream"))) };
    const player = new SessionPlayer(sessionOf(), null, platform);
    player.start();
    await settle();
    expect(player.getState()).toMatchObject({ phase: "connecting", error: "no stream" });
  });

  it("stop closes the stream; a stream that opens after the stop is closed at once", async () => {
    const { player, stream } = await started();
    player.stop();
    expect(stream.state).toBe("closed");
    expect(player.getState().phase).toBe("ready"); // the page is gone: nothing more to show

    const opening: ((s: PlayStream) => void)[] = [];
    const platform = { ...platformWith(new FakeStream()), openStream: vi.fn(() => new Promise<PlayStream>((resolve) => opening.push(resolve))) };
    const remounted = new SessionPlayer(sessionOf(), null, platform);
    remounted.start();
    remounted.stop();
    remounted.start(); // React's StrictMode mounts twice
    const [stale, live] = [new FakeStream(), new FakeStream()];
    opening[0](stale);
    opening[1](live);
    await settle();
    expect(stale.state).toBe("closed");
    expect(stale.resets).toHaveLength(0);
    expect(live.state).toBe("open");
    expect(live.resets).toHaveLength(1);
    expect(remounted.getState().phase).toBe("ready");
  });

  it("the stream closing under the page closes the session", async () => {
    const { player, stream } = await started();
    stream.becomes("closed");
    expect(player.getState().phase).toBe("closed");
  });

  it("closeSession closes the stream and deletes the session", async () => {
    const { player, stream, platform } = await started();
    await player.closeSession();
    expect(stream.state).toBe("closed");
    expect(platform.deleteSession).toHaveBeenCalledWith("s-1");
    expect(player.getState().phase).toBe("closed");
  });
});

/** A stream whose steps are never answered: closing it fails the step in flight, as SessionStream does (499). */
class SlowStepStream extends FakeStream {
  private failInFlight: ((e: Error) => void) | null = null;

  override step(command: StepCommand) {
    this.steps.push(command);
    return new Promise<StreamReply<StepAnswer>>((_, reject) => {
      this.failInFlight = reject;
    });
  }

  override close(): void {
    this.failInFlight?.(new StreamError(499, "closed", "the page closed the stream"));
    super.close();
  }
}

describe("SessionPlayer: a slow step", () => {
  it("is pending with the time it was sent while it is not answered", async () => {
    const { player } = await started({}, new SlowStepStream());
    const sentAt = performance.now();
    player.step();
    expect(player.getState().pending).toEqual({ command: "step", since: sentAt });
    await settle(5000);
    expect(player.getState()).toMatchObject({ stepping: true, pending: { command: "step", since: sentAt } });
  });

  it("closing does not wait for it: the session closes, the step is dropped without an error", async () => {
    const { player, stream, platform } = await started({}, new SlowStepStream());
    player.step();
    await settle(3000);
    await player.closeSession();
    await settle();
    expect(stream.state).toBe("closed");
    expect(platform.deleteSession).toHaveBeenCalledWith("s-1");
    expect(player.getState()).toMatchObject({ phase: "closed", pending: null, stepping: false, error: null });
  });

  it("a close the platform refuses says why and leaves the session open", async () => {
    const { player, platform } = await started({}, new SlowStepStream());
    platform.deleteSession.mockRejectedValueOnce({ detail: "broker unavailable" });
    await player.closeSession();
    expect(player.getState()).toMatchObject({ phase: "ready", pending: null, error: "broker unavailable" });
  });
});

describe("SessionPlayer: crashes", () => {
  it("a crashed stream shows the log tail instead of the picture", async () => {
    const stream = new FakeStream();
    stream.frames = true;
    const revoked = vi.spyOn(URL, "revokeObjectURL");
    const { player } = await started({}, stream);
    const shown = player.getState().frameUrl;
    expect(shown).not.toBeNull();
    stream.logTail = "Traceback: boom";
    stream.reason = "the environment crashed";
    stream.becomes("crashed");
    await settle();
    expect(player.getState()).toMatchObject({ phase: "crashed", frameUrl: null, logTail: "Traceback: boom", crashReason: "the environment crashed" });
    expect(revoked).toHaveBeenCalledWith(shown);
  });

  it("without a log tail, reads the session's: crashed with its tail, or closed elsewhere", async () => {
    const stream = new FakeStream();
    const platform = platformWith(stream, { state: "crashed", log_tail: "from the host", reason: "exit 1" });
    const player = new SessionPlayer(sessionOf(), null, platform);
    player.start();
    await settle();
    stream.answerStep = () => new StreamError(410, "unavailable", "gone", null);
    player.step();
    await settle();
    expect(platform.readSession).toHaveBeenCalledWith("s-1");
    expect(player.getState()).toMatchObject({ phase: "crashed", logTail: "from the host", crashReason: "gone" });

    const closedStream = new FakeStream();
    const closedPlatform = platformWith(closedStream, { state: "closed", reason: "closed by its owner" });
    const closed = new SessionPlayer(sessionOf(), null, closedPlatform);
    closed.start();
    await settle();
    closedStream.becomes("crashed");
    await settle();
    expect(closed.getState()).toMatchObject({ phase: "closed", closedReason: "closed by its owner" });
  });

  it("no log lines at all says so", async () => {
    const stream = new FakeStream();
    const player = new SessionPlayer(sessionOf(), null, platformWith(stream));
    player.start();
    await settle();
    stream.becomes("crashed");
    await settle();
    expect(player.getState()).toMatchObject({ phase: "crashed", logTail: NO_LOG_LINES });
  });
});

describe("SessionPlayer: steps", () => {
  it("Step sends what the controls hold, once, while paused", async () => {
    const { player, stream } = await started();
    player.setValue(1, 0.5);
    player.step();
    expect(player.getState().stepping).toBe(true);
    await settle();
    expect(stream.steps).toEqual([{ action: [0, 0.5], frame: true, observation: "full" }]);
    expect(player.getState()).toMatchObject({ stepping: false, view: { step: 1, episodeReturn: 1, lastAction: [0, 0.5], lastActedBy: "you" } });
  });

  it("Play steps at the control rate, one step in flight, until paused", async () => {
    const { player, stream } = await started(); // 10 steps a second
    player.play();
    await settle(350);
    expect(stream.steps).toHaveLength(4); // at 0, 100, 200 and 300 ms
    player.pause();
    await settle(500);
    expect(stream.steps).toHaveLength(4);
    expect(player.getState().mode).toBe("paused");
  });

  it("Play is refused before the session is ready", async () => {
    const stream = new FakeStream();
    const player = new SessionPlayer(sessionOf(), null, platformWith(stream));
    player.play();
    expect(player.getState().mode).toBe("paused");
  });

  it("the loop stops at the episode's end; with auto reset it resets and goes on", async () => {
    const { player, stream } = await started();
    stream.answerStep = (n) => stepAnswer({ terminated: n === 2 || n === 4 });
    player.play();
    await settle(500);
    expect(stream.steps).toHaveLength(2);
    expect(player.getState()).toMatchObject({ mode: "paused", view: { ended: "terminated", step: 2 } });
    player.play(); // an ended episode plays no more
    expect(player.getState().mode).toBe("paused");

    player.setAutoReset(true);
    player.reset();
    await settle();
    player.play();
    await settle(450);
    expect(stream.resets).toHaveLength(3); // the first, Reset, and the auto reset after the 4th step
    expect(player.getState().mode).toBe("playing");
    expect(player.getState().view.step).toBeGreaterThan(0);
  });

  it("Reset while playing goes on playing the new episode", async () => {
    const { player, stream } = await started();
    player.play("random");
    await settle(150);
    player.reset();
    expect(player.getState().mode).toBe("paused");
    await settle(250);
    expect(stream.resets).toHaveLength(2);
    expect(player.getState().mode).toBe("random");
    expect(player.getState().view.lastActedBy).toBe("random");
  });

  it("a refused step shows the error and pauses; Dismiss clears it", async () => {
    const { player, stream } = await started();
    stream.answerStep = () => new StreamError(422, "invalid", "action: out of range");
    player.play();
    await settle(100);
    expect(player.getState()).toMatchObject({ mode: "paused", error: "action: out of range", stepping: false });
    player.dismissError();
    expect(player.getState().error).toBeNull();
  });

  it("a stream the page closed is no error", async () => {
    const { player, stream } = await started();
    stream.answerStep = () => new StreamError(499, "closed", "closed by the page");
    player.step();
    await settle();
    expect(player.getState().error).toBeNull();
  });

  it("measures the frames shown a second while playing", async () => {
    const { player } = await started();
    player.play();
    await settle(1000);
    expect(player.getState().fps).toBeGreaterThanOrEqual(9);
    player.pause();
    const fps = player.getState().fps;
    await settle(FPS_INTERVAL_MS * 3);
    expect(player.getState().fps).toBe(fps);
  });

  it("each frame replaces the picture, the old one revoked", async () => {
    const stream = new FakeStream();
    stream.frames = true;
    const revoked = vi.spyOn(URL, "revokeObjectURL");
    const { player } = await started({}, stream);
    const first = player.getState().frameUrl;
    expect(player.getState().frameSize).toEqual({ width: 160, height: 120 });
    player.step();
    await settle();
    expect(player.getState().frameUrl).not.toBe(first);
    expect(revoked).toHaveBeenCalledWith(first);
    player.stop();
    expect(player.getState().frameUrl).toBeNull();
  });
});

describe("SessionPlayer: keys", () => {
  it("a key map's keys choose the action; with two actions the last one goes on, and the key map shows it", async () => {
    const { player, stream } = await started({ action_space: { type: "discrete", n: 2 } });
    expect(player.keyDown("ArrowRight", false)).toBe(true);
    player.step();
    await settle();
    expect(player.keyUp("ArrowRight")).toBe(true);
    player.step();
    await settle();
    expect(stream.steps.map((s) => s.action)).toEqual([1, 1]);
    expect(player.getState().values).toEqual([1]); // the key map highlights the action playing
    expect(player.keyDown("q", false)).toBe(false);
  });

  it("a tap between two steps still acts once", async () => {
    const { player, stream } = await started({ action_space: { type: "discrete", n: 3 } });
    player.keyDown("ArrowLeft", false);
    player.keyUp("ArrowLeft");
    player.step();
    await settle();
    player.step();
    await settle();
    expect(stream.steps.map((s) => s.action)).toEqual([0, 1]);
  });

  it("Space toggles a hand's gripper; keys let go when the window loses the focus", async () => {
    const { player, stream } = await started({ action_space: HAND_STEPS, metadata: { control: "hand_steps", control_rate: 10 } });
    expect(player.getState().values).toEqual([2, 2, 2, 0]);
    expect(player.keyDown(" ", false)).toBe(true);
    expect(player.getState().values).toEqual([2, 2, 2, 1]);
    expect(player.keyDown(" ", true)).toBe(true); // held: no second toggle
    expect(player.getState().values).toEqual([2, 2, 2, 1]);
    player.keyDown("ArrowUp", false);
    player.releaseKeys();
    player.step();
    await settle();
    expect(stream.steps[0].action).toEqual([0, 2, 2, 1]); // the tap still moved the hand once (-x)
    player.step();
    await settle();
    expect(stream.steps[1].action).toEqual([2, 2, 2, 1]);
  });
});

describe("SessionPlayer: the teacher", () => {
  const hand = { action_space: HAND_STEPS, metadata: { control: "hand_steps", control_rate: 10 } };

  it("T plays the teacher's suggestion at once when paused; the gripper holds the teacher's", async () => {
    const stream = new FakeStream();
    stream.info = { teacher_action: [3, 2, 1, 1] };
    const { player } = await started(hand, stream);
    expect(player.keyDown("t", false)).toBe(true);
    await settle();
    expect(stream.steps.map((s) => s.action)).toEqual([[3, 2, 1, 1]]);
    expect(player.getState().view.lastActedBy).toBe("teacher");
    expect(player.getState().values[3]).toBe(1);
  });

  it("no suggestion, no step; following the teacher plays it at every step", async () => {
    const stream = new FakeStream();
    const { player } = await started(hand, stream);
    player.playTeacher();
    await settle();
    expect(stream.steps).toHaveLength(0);

    stream.answerStep = () => stepAnswer({ info: { teacher_action: [0, 2, 2, 0] } });
    player.step(); // the person's step brings a suggestion
    await settle();
    player.setFollowTeacher(true);
    player.play();
    await settle(350); // one control period after the person's step, then every period
    expect(stream.steps.slice(1).map((s) => s.action)).toEqual([[0, 2, 2, 0], [0, 2, 2, 0], [0, 2, 2, 0]]);
    expect(player.getState().view.lastActedBy).toBe("teacher");
  });
});

describe("SessionPlayer: snapshots", () => {
  it("takes in-session snapshots and restores one, paused, with how long it took", async () => {
    const { player, stream } = await started();
    player.step();
    await settle();
    await player.takeSnapshot();
    player.step();
    await settle();
    const [snapshot] = player.getState().snapshots;
    expect(snapshot).toMatchObject({ handle: "h1", number: 1, view: { step: 1 } });
    await player.restoreSnapshot(snapshot);
    expect(stream.restores).toEqual([{ handle: "h1", options: { frame: true, observation: "full" } }]);
    expect(player.getState()).toMatchObject({ mode: "paused", restoreSeconds: 0.5, view: { step: 1, info: { restored: "h1" }, observation: [1] } });
  });

  it("saves a durable snapshot; refuses before the stream is open", async () => {
    const { player, stream } = await started();
    await expect(player.saveSnapshot("before the jump")).resolves.toMatchObject({ id: "snap-1" });
    expect(stream.saved).toEqual(["before the jump"]);
    const unopened = new SessionPlayer(sessionOf(), null, platformWith(new FakeStream()));
    await expect(unopened.saveSnapshot("x")).rejects.toThrow("the session's stream is not open");
  });
});
