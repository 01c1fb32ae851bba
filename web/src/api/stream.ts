// The session's WebSocket stream (`/v0/sessions/{id}/stream`) for the browser: JSON commands
// with ids, each answered once; an answer that announces a frame (`result.frame`, or render's
// `frame`) is paired with the one binary message (the JPEG bytes) the gateway sends right after
// it. A 410 answer (the environment crashed) or close code 4410 puts the stream in its
// "crashed" state with the log tail; every command still waiting is refused then. The messages'
// types are the gateway's own (StreamCommand, StreamAnswer, StreamFrame in schema.d.ts).
// After `useBinarySteps(actionSpace)`, steps that ask for the whole observation go as the
// environment protocol's binary messages instead (binarySteps.ts), answered alike; a binary
// message that no announced frame waits for is such a step's answer.
//
//   const stream = await SessionStream.open(sessionId);
//   const first = await stream.reset({ seed: 7, frame: true, observation: "none" });
//   img.src = URL.createObjectURL(first.frame!.blob);
//   const next = await stream.step({ action: 1, frame: true });
//   stream.close();
import type { components } from "./schema";
import { savedToken } from "../lib/auth/token";
import type { SpaceJson } from "../lib/play/spaces";
import { readStepResponse, stepRequestBytes } from "./binarySteps";
import { encodable, UnsupportedValueError, valueFromJson } from "./envValues";

type Schemas = components["schemas"];
/** A command's own fields (the stream adds `id` and `op`); those with defaults may be left out. */
type Fields<C, Required extends keyof C = never> = Pick<C, Required> & Partial<Omit<C, "id" | "op" | Required>>;

/** What an answer says of the binary message that follows it. */
export type StreamFrame = Schemas["StreamFrame"];
/** A frame as received: what the answer announced plus the bytes (a JPEG Blob). */
export type ReceivedFrame = StreamFrame & { blob: Blob };
/** How much of the observation an answer carries: all of it, its sha256 digest, or nothing. */
export type ObservationMode = Schemas["StepCommand"]["observation"];

export type ResetCommand = Fields<Schemas["ResetCommand"]>;
export type StepCommand = Fields<Schemas["StepCommand"], "action">;
export type HoldCommand = Fields<Schemas["HoldCommand"], "action" | "steps">;
/** What restore and restore_saved take beside the handle or id. */
export type FrameOptions = Fields<Schemas["RestoreCommand"]>;

export type ResetAnswer = Schemas["StreamResetResult"];
/** A restore's answer: a reset's, with `restore_s` (the seconds the environment took). */
export type RestoreAnswer = Schemas["StreamRestoreResult"];
export type StepAnswer = Schemas["StreamStepResult"];
export type HoldAnswer = Schemas["HoldResult"];
export type SnapshotAnswer = Schemas["SnapshotResult"];
export type SavedSnapshotAnswer = Schemas["SavedSnapshotPublic"];
export type RenderAnswer = Schemas["StreamRenderResult"];
export type StreamCommand = Schemas["StreamCommand"];

/** One answer: the command's result, and its frame when it announced one. */
export interface StreamReply<R> {
  id: number;
  op: string;
  result: R;
  frame: ReceivedFrame | null;
}

export interface OpenOptions {
  token?: string | null;
  /** The stream's URL (default: `streamUrl` for the page's origin). */
  url?: string;
  /** Makes the socket (default `new WebSocket(url)`); tests pass a stand-in. */
  connect?: (url: string) => WebSocket;
}

export type StreamState = "connecting" | "open" | "closed" | "crashed";

/** A refused command, or the stream gone: the gateway's error (`status` 410 and `log_tail` on a crash). */
export class StreamError extends Error {
  readonly status: number;
  readonly code: string;
  readonly logTail: string | null;
  /** The command's field the error is about (e.g. "action"), when it names one. */
  readonly field: string | null;
  constructor(status: number, code: string, detail: string, logTail: string | null = null, field: string | null = null) {
    super(detail);
    this.name = "StreamError";
    this.status = status;
    this.code = code;
    this.logTail = logTail;
    this.field = field;
  }
}

interface Waiting {
  resolve: (reply: StreamReply<unknown>) => void;
  reject: (error: StreamError) => void;
}

/** A `StreamAnswer` as it comes off the wire (read defensively: any of it may be missing). */
interface WireAnswer {
  id?: Schemas["StreamErrorAnswer"]["id"];
  op?: string | null;
  result?: Record<string, unknown>;
  error?: Partial<Schemas["StreamError"]>;
}

/** The stream's URL for the page's origin (ws: or wss: like http: or https:). */
export function streamUrl(sessionId: string, token?: string | null, origin: Location | URL = window.location): string {
  const scheme = origin.protocol === "https:" ? "wss:" : "ws:";
  const query = token ? `?token=${encodeURIComponent(token)}` : "";
  return `${scheme}//${origin.host}/v0/sessions/${encodeURIComponent(sessionId)}/stream${query}`;
}

/** The frame an answer announces: `result.frame` (reset, step, restores) or render's own. */
function announcedFrame(result: Record<string, unknown> | undefined): StreamFrame | null {
  const frame = result?.frame;
  if (typeof frame === "object" && frame !== null && typeof (frame as { size?: unknown }).size === "number") {
    return frame as StreamFrame;
  }
  return null;
}

export class SessionStream {
  readonly sessionId: string;
  private socket: WebSocket;
  private nextId = 1;
  private waiting = new Map<number, Waiting>();
  /** An answer whose frame (the next binary message) has not come yet. */
  private awaitingFrame: { reply: StreamReply<unknown>; frame: StreamFrame } | null = null;
  private listeners = new Set<(state: StreamState) => void>();
  private stateNow: StreamState = "connecting";
  /** The crashed environment's last log lines (410's log_tail, or the close reason). */
  logTail: string | null = null;
  /** Why the stream closed or crashed, in words. */
  reason: string | null = null;
  /** Steps go as binary messages (`useBinarySteps`): the action space to encode actions for, and
   * the observation labels a binary answer does not carry. */
  private binary: { space: SpaceJson; labels: StepAnswer["observation_labels"] } | null = null;

  private constructor(sessionId: string, socket: WebSocket) {
    this.sessionId = sessionId;
    this.socket = socket;
    socket.binaryType = "arraybuffer";
    socket.addEventListener("message", (event) => this.onMessage(event));
    socket.addEventListener("close", (event) => this.onClose(event));
  }

  /** Opens the session's stream; resolves once it is open, rejects when it cannot open. */
  static open(sessionId: string, options: OpenOptions = {}): Promise<SessionStream> {
    const url = options.url ?? streamUrl(sessionId, options.token === undefined ? savedToken() : options.token);
    const socket = options.connect ? options.connect(url) : new WebSocket(url);
    const stream = new SessionStream(sessionId, socket);
    return new Promise((resolve, reject) => {
      const opened = () => {
        cleanup();
        stream.setState("open");
        resolve(stream);
      };
      const failed = (event: Event | CloseEvent) => {
        cleanup();
        const close = event as CloseEvent;
        const detail = close.reason || `the stream of session ${sessionId} could not open`;
        reject(new StreamError(close.code === 4404 ? 404 : close.code === 4410 ? 410 : 503, "unavailable", detail));
      };
      const cleanup = () => {
        socket.removeEventListener("open", opened);
        socket.removeEventListener("close", failed);
      };
      socket.addEventListener("open", opened);
      socket.addEventListener("close", failed);
    });
  }

  get state(): StreamState {
    return this.stateNow;
  }

  /** Calls `listener` on every change of state; returns what removes it. */
  onState(listener: (state: StreamState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  reset(command: ResetCommand = {}): Promise<StreamReply<ResetAnswer>> {
    return this.send("reset", { ...command });
  }

  step(command: StepCommand): Promise<StreamReply<StepAnswer>> {
    const binary = this.binary;
    if (binary && (command.observation ?? "full") === "full" && !command.agent) {
      return this.sendBinaryStep(command, binary.space);
    }
    return this.send("step", { ...command });
  }

  /**
   * Sends the steps that ask for the whole observation (and no agent data) as binary messages
   * from now on; whether it will (not for an action space the browser cannot encode). `labels`:
   * the session's `observation_labels`, for the answers.
   */
  useBinarySteps(actionSpace: SpaceJson | null, labels: StepAnswer["observation_labels"] = null): boolean {
    this.binary = actionSpace && encodable(actionSpace) ? { space: actionSpace, labels } : null;
    return this.binary !== null;
  }

  /** Whether steps go as binary messages now. */
  get binarySteps(): boolean {
    return this.binary !== null;
  }

  hold(command: HoldCommand): Promise<StreamReply<HoldAnswer>> {
    return this.send("hold", { ...command });
  }

  /** An in-session snapshot: its handle restores this moment while the session lives. */
  snapshot(): Promise<StreamReply<SnapshotAnswer>> {
    return this.send("snapshot", {});
  }

  restore(handle: string, options: Omit<FrameOptions, "handle"> = {}): Promise<StreamReply<RestoreAnswer>> {
    return this.send("restore", { handle, ...options });
  }

  /** A durable snapshot with a label (GET /v0/snapshots lists it). */
  saveSnapshot(label: string): Promise<StreamReply<SavedSnapshotAnswer>> {
    return this.send("save_snapshot", { label });
  }

  /** Restores a saved snapshot (`snapshot_id`) into this session. */
  restoreSaved(snapshotId: string, options: Omit<FrameOptions, "handle"> = {}): Promise<StreamReply<RestoreAnswer>> {
    return this.send("restore_saved", { snapshot_id: snapshotId, ...options });
  }

  render(): Promise<StreamReply<RenderAnswer>> {
    return this.send("render", {});
  }

  /** Sends one command `{id, op, ...fields}` (a `StreamCommand`); resolves with its answer (and frame). */
  send<R>(op: StreamCommand["op"], fields: Record<string, unknown>): Promise<StreamReply<R>> {
    if (this.stateNow !== "open") return Promise.reject(this.goneError());
    const id = this.nextId++;
    return new Promise<StreamReply<R>>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as Waiting["resolve"], reject });
      this.socket.send(JSON.stringify({ ...fields, id, op }));
    });
  }

  private sendBinaryStep(command: StepCommand, space: SpaceJson): Promise<StreamReply<StepAnswer>> {
    if (this.stateNow !== "open") return Promise.reject(this.goneError());
    let bytes: Uint8Array;
    const id = this.nextId++;
    try {
      bytes = stepRequestBytes(id, valueFromJson(command.action, space), { frame: command.frame, autoReset: command.auto_reset });
    } catch (e) {
      return Promise.reject(new StreamError(422, "invalid_action", `session ${this.sessionId}, step: ${e instanceof Error ? e.message : String(e)}`, null, "action"));
    }
    return new Promise<StreamReply<StepAnswer>>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as Waiting["resolve"], reject });
      this.socket.send(bytes);
    });
  }

  /** Closes the socket; commands still waiting are refused. */
  close(): void {
    if (this.stateNow === "open" || this.stateNow === "connecting") {
      this.reason = this.reason ?? "closed by the page";
      this.setState("closed");
      this.socket.close(1000, "closed by the page");
    }
    this.refuseAll(this.goneError());
  }

  private setState(state: StreamState): void {
    if (this.stateNow === state) return;
    this.stateNow = state;
    for (const listener of this.listeners) listener(state);
  }

  private goneError(): StreamError {
    if (this.stateNow === "crashed") {
      return new StreamError(410, "unavailable", this.reason ?? "the environment crashed", this.logTail);
    }
    return new StreamError(499, "closed", this.reason ?? `the stream of session ${this.sessionId} is closed`);
  }

  private refuseAll(error: StreamError): void {
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    this.awaitingFrame = null;
    for (const w of waiting) w.reject(error);
  }

  private onMessage(event: MessageEvent): void {
    if (typeof event.data !== "string") {
      if (this.awaitingFrame) this.onFrameBytes(event.data as Blob | ArrayBuffer);
      else if (event.data instanceof ArrayBuffer) this.onBinaryAnswer(new Uint8Array(event.data));
      else void (event.data as Blob).arrayBuffer().then((data) => this.onBinaryAnswer(new Uint8Array(data)));
      return;
    }
    if (this.awaitingFrame) {
      // The gateway sends an announced frame before anything else: a text now means it never came.
      const { reply } = this.awaitingFrame;
      this.awaitingFrame = null;
      this.take(reply.id)?.reject(new StreamError(502, "protocol", `answer ${reply.id} (${reply.op}) announced a frame that never came`));
    }
    let answer: WireAnswer;
    try {
      answer = JSON.parse(event.data) as WireAnswer;
    } catch {
      return; // the gateway sends JSON only; nothing to pair this with
    }
    const id = typeof answer.id === "number" ? answer.id : null;
    if (answer.error) {
      const { status = 500, code = "unknown", detail = "the command failed", log_tail = null, field = null } = answer.error;
      this.refused(id, new StreamError(status, code, detail, log_tail, field));
      return;
    }
    if (id === null) return;
    const reply: StreamReply<unknown> = { id, op: answer.op ?? "", result: answer.result ?? {}, frame: null };
    const frame = announcedFrame(answer.result);
    if (frame && frame.size > 0) {
      this.awaitingFrame = { reply, frame };
      return;
    }
    this.take(id)?.resolve(reply);
  }

  /** The command `id` (or the only one waiting, when the answer names none) was refused; a 410
   * (the session ended or crashed) refuses every other one too. */
  private refused(id: number | null, error: StreamError): void {
    if (error.status === 410) {
      this.logTail = error.logTail ?? this.logTail;
      this.reason = error.message;
      this.setState("crashed");
    }
    if (id !== null) this.take(id)?.reject(error);
    else if (this.waiting.size === 1) this.take([...this.waiting.keys()][0])?.reject(error);
    if (error.status === 410) this.refuseAll(error);
  }

  /** A binary step's answer (binarySteps.ts). A frame it cannot show (not a JPEG) or an
   * observation it cannot read sends the next steps as text commands. */
  private onBinaryAnswer(bytes: Uint8Array): void {
    let answer: ReturnType<typeof readStepResponse>;
    try {
      answer = readStepResponse(bytes, this.binary?.labels ?? null);
    } catch (e) {
      this.binary = null;
      const detail = e instanceof UnsupportedValueError ? e.message : `an answer could not be read (${String(e)})`;
      this.refused(null, new StreamError(502, "protocol", `session ${this.sessionId}, step: ${detail}; the next steps go as text`));
      return;
    }
    if ("error" in answer) {
      const { status, code, detail, logTail } = answer.error;
      this.refused(answer.id, new StreamError(status, code, detail, logTail, code === "invalid_action" ? "action" : null));
      return;
    }
    if (answer.unreadableFrame) this.binary = null;
    const { result, jpeg } = answer;
    const frame = result.frame && jpeg ? { ...result.frame, blob: new Blob([jpeg as Uint8Array<ArrayBuffer>], { type: "image/jpeg" }) } : null;
    this.take(answer.id)?.resolve({ id: answer.id, op: "step", result, frame });
  }

  private onFrameBytes(data: Blob | ArrayBuffer): void {
    const pending = this.awaitingFrame;
    if (!pending) return;
    this.awaitingFrame = null;
    const blob = data instanceof Blob && data.type ? data : new Blob([data], { type: pending.frame.mime });
    pending.reply.frame = { ...pending.frame, blob };
    this.take(pending.reply.id)?.resolve(pending.reply);
  }

  private take(id: number): Waiting | undefined {
    const waiting = this.waiting.get(id);
    this.waiting.delete(id);
    return waiting;
  }

  private onClose(event: CloseEvent): void {
    if (this.stateNow === "closed" || this.stateNow === "crashed") {
      this.refuseAll(this.goneError());
      return;
    }
    if (event.code === 4410) {
      this.reason = this.reason ?? (event.reason || "the session closed or crashed");
      this.logTail = this.logTail ?? null;
      this.setState("crashed");
    } else {
      this.reason = event.reason || `the stream closed (code ${event.code})`;
      this.setState("closed");
    }
    this.refuseAll(this.goneError());
  }
}
