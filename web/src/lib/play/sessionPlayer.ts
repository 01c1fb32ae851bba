// A session played in the page, without React: its stream, the live picture (binary JPEG frames
// as object URLs, the old one revoked), the play loop at the control rate with one step in
// flight, the person's controls or the Random agent choosing each action, the episode's count
// and return, in-session snapshots, and the crashed state with the log tail. Hand-controlled arms
// take the hand keys (handKeys.ts); a step or reset whose info has a teacher's suggestion can be
// played by the Teacher button or T, once or (following the teacher) at every step. The command
// in flight (step, reset, restore, close) is in the state with the time it was sent, so the page
// can show a slow one's progress; closing does not wait for a step in flight (its stream closes).
//
// What the page shows is one PlayState in a Store (playState.ts says how each event changes it);
// the player reads it at once wherever it decides, so there is no second copy to keep in step.
// The page's hook (pages/session/usePlay.ts) subscribes to it, starts and stops the player with
// the page, and passes it the keyboard.
//
//   const player = new SessionPlayer(session, null, platform);
//   player.subscribe(() => render(player.getState()));
//   player.start();            // opens the stream and resets with a seed of its own
//   player.play("random");     // the Random agent at the control rate
//   player.stop();             // closes the stream
import type { Schemas } from "../../api/client";
import { type ObservationMode, type ReceivedFrame, type ResetAnswer, type SavedSnapshotAnswer, type SessionStream, StreamError } from "../../api/stream";
import { errorText } from "../errors";
import { Store } from "../store";
import { actionOf, chooseControls, type Controls, initialValues } from "./controls";
import { GRIPPER, gripperToggled, type HandControl } from "./handKeys";
import { observationMode } from "./observation";
import { controlRate, RateMeter, StepPacer } from "./pacer";
import { type ActedBy, type Command, type InSessionSnapshot, initialPlayState, type Mode, nextPlayState, type PlayEvent, type PlayState } from "./playState";
import { handOf, PlayKeys } from "./playKeys";
import { sampleSpace } from "./sampler";
import { randomSeed } from "./seeds";
import { asSpace, flatten, type SpaceJson } from "./spaces";
import { teacherAction } from "./teacher";

type Session = Schemas["SessionPublic"];

/** What the player uses of a session's stream (SessionStream); binary steps are optional. */
export type PlayStream = Pick<
  SessionStream,
  "state" | "logTail" | "reason" | "onState" | "reset" | "step" | "snapshot" | "restore" | "saveSnapshot" | "restoreSaved" | "close"
> & Partial<Pick<SessionStream, "useBinarySteps">>;

/** What the player asks of the platform: the session's stream, and the session's REST calls. */
export interface PlayPlatform {
  openStream(sessionId: string): Promise<PlayStream>;
  /** The session as GET /v0/sessions/{id} describes it now; undefined when that failed. */
  readSession(sessionId: string): Promise<Session | undefined>;
  /** Closes the session (DELETE /v0/sessions/{id}); throws when the platform refuses. */
  deleteSession(sessionId: string): Promise<void>;
}

/** How often the frames shown a second are measured while playing. */
export const FPS_INTERVAL_MS = 500;

type Timer = ReturnType<typeof setTimeout>;

export class SessionPlayer {
  readonly controls: Controls;
  readonly actionSpace: SpaceJson | null;
  readonly observationMode: ObservationMode;
  /** Steps a second while playing. */
  readonly rate: number;
  readonly hand: HandControl | null;

  private readonly store: Store<PlayState, PlayEvent>;
  private readonly pacer: StepPacer;
  private readonly meter = new RateMeter();
  private readonly keys: PlayKeys;
  private stream: PlayStream | null = null;
  private loopTimer: Timer | null = null;
  private fpsTimer: ReturnType<typeof setInterval> | null = null;
  /** A reset, restore or single step under way. */
  private busy = false;
  /** The next step plays the teacher's suggestion. */
  private teacherOnce = false;
  /** Counts start() and stop(): what a start began is dropped once another start or a stop came. */
  private run = 0;

  constructor(
    private readonly session: Session,
    private readonly resumeFrom: string | null,
    private readonly platform: PlayPlatform,
  ) {
    this.actionSpace = asSpace(session.action_space);
    this.controls = chooseControls(this.actionSpace, session.metadata, session.kwargs?.camera);
    this.observationMode = observationMode(asSpace(session.observation_space));
    this.rate = controlRate(session.metadata);
    this.hand = handOf(this.controls);
    this.pacer = new StepPacer(this.rate);
    this.keys = new PlayKeys(this.controls);
    this.store = new Store(nextPlayState, initialPlayState(initialValues(this.controls)));
  }

  readonly getState = (): PlayState => this.store.getState();
  readonly subscribe = (listener: () => void): (() => void) => this.store.subscribe(listener);

  private get state(): PlayState {
    return this.store.getState();
  }

  private dispatch(event: PlayEvent): void {
    this.store.dispatch(event);
  }

  // ---- the stream's life -------------------------------------------------------------------

  /** Opens the stream and begins its first episode (a reset, or the saved snapshot restored). */
  start(): void {
    const run = ++this.run;
    const live = () => this.run === run;
    this.platform.openStream(this.session.id)
      .then(async (stream) => {
        if (!live()) return stream.close();
        this.stream = stream;
        // Whole observations come faster as the environment protocol's binary answers (the
        // gateway passes them through); pictures stay on text steps, which leave them out.
        if (this.observationMode === "full") stream.useBinarySteps?.(this.actionSpace, this.session.observation_labels ?? null);
        stream.onState((state) => {
          if (state === "crashed") void this.crashed(stream.logTail, stream.reason);
          else if (state === "closed" && live()) this.dispatch({ type: "streamClosed" });
        });
        if (this.resumeFrom) {
          const resumeFrom = this.resumeFrom;
          const { result, frame } = await this.sent("restore", () => stream.restoreSaved(resumeFrom, { frame: true, observation: this.observationMode }));
          this.began(result, frame, null, `resumed from saved snapshot ${this.resumeFrom}`);
        } else {
          await this.resetEpisode();
        }
        if (live()) this.dispatch({ type: "ready" });
      })
      .catch((e: unknown) => {
        if (live()) this.failed(e);
      });
  }

  /** Stops the loop, closes the stream and revokes the picture (the page went away). */
  stop(): void {
    this.run++;
    this.setMode("paused");
    this.stream?.close();
    this.stream = null;
    const shown = this.state.frameUrl;
    this.dispatch({ type: "frameDropped" });
    if (shown) URL.revokeObjectURL(shown);
  }

  /**
   * Closes the stream and the session (DELETE); the page shows it closed. A command in flight (a
   * slow step) is not waited for: closing the stream drops it, and the platform stops the instance.
   * A close the platform refuses shows its error, and Close can be tried again.
   */
  readonly closeSession = async (): Promise<void> => {
    this.run++; // the stream's close is this close's, not news from the platform
    this.setMode("paused");
    this.stream?.close();
    this.stream = null;
    try {
      await this.sent("close", () => this.platform.deleteSession(this.session.id));
      this.dispatch({ type: "sessionClosed" });
    } catch (e) {
      this.failed(e);
    }
  };

  // ---- the person's commands ---------------------------------------------------------------

  /** Plays at the control rate: the person's controls, or the Random agent. */
  readonly play = (as: "playing" | "random" = "playing"): void => {
    if (this.state.phase !== "ready" || this.state.view.ended) return;
    const wasPaused = this.state.mode === "paused";
    this.setMode(as);
    if (wasPaused) this.loop();
  };

  readonly pause = (): void => this.setMode("paused");

  /** One step, while paused. */
  readonly step = (): void => {
    if (this.state.mode !== "paused" || this.busy) return;
    void this.stepOnce();
  };

  /** A new episode with a new seed; playing goes on after it when it was playing. */
  readonly reset = (): void => {
    if (this.busy) return;
    const was = this.state.mode;
    this.setMode("paused");
    void this.resetEpisode().then(() => {
      if (was !== "paused") this.play(was);
    }, this.failed);
  };

  /** Plays the teacher's suggestion: at once when paused, else as the next step's action. */
  readonly playTeacher = (): void => {
    const { phase, view, mode } = this.state;
    if (phase !== "ready" || view.ended) return;
    if (teacherAction(view.info, this.actionSpace) === null) return;
    this.teacherOnce = true;
    if (mode === "paused" && !this.busy) void this.stepOnce();
  };

  readonly setValue = (index: number, value: number): void => this.dispatch({ type: "valueSet", index, value });
  readonly setAutoReset = (on: boolean): void => this.dispatch({ type: "autoResetSet", on });
  readonly setFollowTeacher = (on: boolean): void => this.dispatch({ type: "followTeacherSet", on });
  readonly dismissError = (): void => this.dispatch({ type: "errorCleared" });

  readonly takeSnapshot = async (): Promise<void> => {
    const stream = this.stream;
    if (!stream) return;
    try {
      const { result } = await stream.snapshot();
      this.dispatch({ type: "snapshotTaken", handle: result.handle });
    } catch (e) {
      this.failed(e);
    }
  };

  readonly restoreSnapshot = async (snapshot: InSessionSnapshot): Promise<void> => {
    const stream = this.stream;
    if (!stream || this.busy) return;
    this.setMode("paused");
    this.busy = true;
    try {
      const { result, frame } = await this.sent("restore", () => stream.restore(snapshot.handle, { frame: true, observation: this.observationMode }));
      this.showFrame(frame);
      this.dispatch({
        type: "snapshotRestored", snapshot, info: result.info, observation: result.observation, restoreSeconds: result.restore_s ?? null,
      });
    } catch (e) {
      this.failed(e);
    } finally {
      this.busy = false;
    }
  };

  /** A durable snapshot with a label; throws when the stream is not open or refuses it. */
  readonly saveSnapshot = async (label: string): Promise<SavedSnapshotAnswer> => {
    const stream = this.stream;
    if (!stream) throw new Error("the session's stream is not open");
    return (await stream.saveSnapshot(label)).result;
  };

  // ---- the keyboard ------------------------------------------------------------------------

  /** A key went down; whether it is the session's (the page then keeps it from the browser). */
  keyDown(key: string, repeat: boolean): boolean {
    const press = this.keys.press(key, repeat);
    if (press === "play-teacher") this.playTeacher();
    if (press === "toggle-gripper" && this.hand) this.setValue(GRIPPER, gripperToggled(this.hand, this.state.values[GRIPPER]));
    return press !== null;
  }

  /** A key went up; whether it is the session's. */
  keyUp(key: string): boolean {
    return this.keys.release(key);
  }

  /** Every key is up (the window lost the focus). */
  releaseKeys(): void {
    this.keys.releaseAll();
  }

  // ---- the loop ----------------------------------------------------------------------------

  private setMode(mode: Mode): void {
    this.dispatch({ type: "modeChanged", mode });
    if (mode === "paused") {
      if (this.loopTimer !== null) clearTimeout(this.loopTimer);
      this.loopTimer = null;
      if (this.fpsTimer !== null) clearInterval(this.fpsTimer);
      this.fpsTimer = null;
    } else if (this.fpsTimer === null) {
      this.fpsTimer = setInterval(() => this.dispatch({ type: "fpsMeasured", fps: this.meter.rate(performance.now()) }), FPS_INTERVAL_MS);
    }
  }

  /** Sends the next step once the pacer allows, while playing; again after each answer. */
  private readonly loop = (): void => {
    this.loopTimer = null;
    if (this.state.mode === "paused") return;
    const wait = this.pacer.delay(performance.now());
    if (wait === null) return; // the answer in flight calls the loop again
    if (wait > 0) {
      this.loopTimer = setTimeout(this.loop, wait);
      return;
    }
    void this.stepOnce().then((goOn) => {
      if (!goOn) {
        if (this.state.mode !== "paused") this.setMode("paused");
        return;
      }
      this.loop();
    });
  };

  /** One step; resolves with whether the loop may go on. */
  private async stepOnce(): Promise<boolean> {
    const stream = this.stream;
    if (!stream || stream.state !== "open" || this.state.view.ended || this.pacer.busy) return false;
    const { action, by } = this.nextAction();
    this.pacer.sent(performance.now());
    this.dispatch({ type: "commandStarted", command: "step", at: performance.now() });
    try {
      const { result, frame } = await stream.step({ action, frame: true, observation: this.observationMode });
      this.showFrame(frame);
      this.meter.tick(performance.now());
      this.dispatch({ type: "stepped", answer: result, action, by });
      const { ended } = this.state.view;
      if (ended && this.state.autoReset && this.state.mode !== "paused") {
        await this.resetEpisode();
        return true;
      }
      return ended === null;
    } catch (e) {
      this.failed(e);
      return false;
    } finally {
      this.pacer.answered();
      this.dispatch({ type: "commandFinished" });
    }
  }

  /**
   * The action for this step and who chose it: the teacher's suggestion (asked for once, or
   * followed, when the latest info has one), the Random agent's, or what the controls and keys
   * say. After a teacher's step a hand-controlled gripper holds the teacher's, so taking over
   * does not drop what it holds.
   */
  private nextAction(): { action: unknown; by: ActedBy } {
    if (this.teacherOnce || this.state.followTeacher) {
      const suggestion = teacherAction(this.state.view.info, this.actionSpace);
      this.teacherOnce = false;
      if (suggestion !== null) {
        this.keys.forgetPressed();
        if (this.hand) this.setValue(GRIPPER, flatten(suggestion)[GRIPPER] ?? 0);
        return { action: suggestion, by: "teacher" };
      }
    }
    if (this.state.mode === "random" && this.actionSpace) return { action: sampleSpace(this.actionSpace), by: "random" };
    const keys = this.keys.takeForStep();
    const action = actionOf(this.controls, this.state.values, keys);
    // A Discrete key map's choice carries on while no key is down, and the key map shows it.
    if (this.controls.kind === "keys") this.dispatch({ type: "valueSet", index: 0, value: Number(action) });
    return { action, by: "you" };
  }

  /** A new episode with a seed drawn here, so that it can be played back. */
  private async resetEpisode(): Promise<void> {
    const stream = this.stream;
    if (!stream) return;
    const seed = randomSeed();
    this.busy = true;
    try {
      const { result, frame } = await this.sent("reset", () => stream.reset({ seed, frame: true, observation: this.observationMode }));
      this.dispatch({ type: "errorCleared" });
      this.began(result, frame, seed, `reset with seed ${seed}`);
    } finally {
      this.busy = false;
    }
  }

  /** `send`'s answer, with the command in the state while it is in flight. */
  private async sent<T>(command: Command, send: () => Promise<T>): Promise<T> {
    this.dispatch({ type: "commandStarted", command, at: performance.now() });
    try {
      return await send();
    } finally {
      this.dispatch({ type: "commandFinished" });
    }
  }

  private began(answer: ResetAnswer, frame: ReceivedFrame | null, seed: number | null, origin: string): void {
    this.showFrame(frame);
    this.dispatch({
      type: "episodeBegan", seed, origin, info: answer.info, observation: answer.observation,
      observationLabels: answer.observation_labels ?? this.session.observation_labels ?? null,
    });
  }

  // ---- the picture and the session's end ---------------------------------------------------

  private showFrame(frame: ReceivedFrame | null): void {
    if (!frame) return;
    const old = this.state.frameUrl;
    this.dispatch({ type: "frameShown", url: URL.createObjectURL(frame.blob), size: { width: frame.width, height: frame.height } });
    if (old) URL.revokeObjectURL(old);
  }

  /** A command failed: the session went away (410), the page closed the stream (499), or an error to show. */
  private readonly failed = (e: unknown): void => {
    if (e instanceof StreamError && e.status === 410) {
      void this.crashed(e.logTail, e.message);
      return;
    }
    if (e instanceof StreamError && e.status === 499) return;
    this.setMode("paused");
    this.dispatch({ type: "failed", message: errorText(e) });
  };

  /** The session went away (410, close 4410): crashed, with the log tail, or closed (e.g. elsewhere). */
  private async crashed(tail: string | null, reason: string | null): Promise<void> {
    this.setMode("paused");
    let logTail = tail;
    if (!logTail) {
      const session = await this.platform.readSession(this.session.id);
      if (session?.state === "closed") {
        this.dispatch({ type: "sessionClosed", reason: session.reason ?? reason });
        return;
      }
      logTail = session?.log_tail ?? null;
      reason = reason ?? session?.reason ?? null;
    }
    const shown = this.state.frameUrl;
    this.dispatch({ type: "crashed", reason, logTail }); // the log tail instead of the picture
    if (shown) URL.revokeObjectURL(shown);
  }
}
