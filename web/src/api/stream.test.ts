import { describe, expect, it } from "vitest";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  AutoResetSchema, EnvRequestSchema, EnvResponseSchema, ErrorCode, ErrorSchema, FrameSchema, StepResponseSchema,
} from "../gen/simulusion/env/v1/environment_pb";
import { DataMapSchema, DataSchema, TensorSchema, ValueSchema } from "../gen/simulusion/env/v1/values_pb";
import { jsonFromValue } from "./envValues";
import { SessionStream, StreamError, streamUrl } from "./stream";

/** A WebSocket stand-in: records what is sent, and lets the test play the gateway's part. */
class FakeSocket {
  sent: Record<string, unknown>[] = [];
  /** Binary messages the page sent (binary steps). */
  sentBytes: Uint8Array[] = [];
  binaryType = "blob";
  closed: { code?: number; reason?: string } | null = null;
  private listeners = new Map<string, Set<(event: unknown) => void>>();
  addEventListener(type: string, listener: (event: unknown) => void) {
    if (!this.listeners.has(type)) this.listeners.set(type, new Set());
    this.listeners.get(type)!.add(listener);
  }
  removeEventListener(type: string, listener: (event: unknown) => void) {
    this.listeners.get(type)?.delete(listener);
  }
  emit(type: string, event: unknown) {
    for (const listener of [...(this.listeners.get(type) ?? [])]) listener(event);
  }
  send(data: string | Uint8Array) {
    if (typeof data === "string") this.sent.push(JSON.parse(data) as Record<string, unknown>);
    else this.sentBytes.push(data);
  }
  close(code?: number, reason?: string) {
    this.closed = { code, reason };
  }
  answer(message: unknown) {
    this.emit("message", { data: JSON.stringify(message) });
  }
  bytes(data: Uint8Array<ArrayBuffer>) {
    this.emit("message", { data: new Blob([data]) });
  }
  /** A binary message as a browser with `binaryType = "arraybuffer"` delivers it. */
  buffer(data: Uint8Array) {
    this.emit("message", { data: data.slice().buffer });
  }
}

async function opened() {
  const socket = new FakeSocket();
  const pending = SessionStream.open("s-1", { url: "ws://test/v0/sessions/s-1/stream", connect: () => socket as unknown as WebSocket });
  socket.emit("open", {});
  return { socket, stream: await pending };
}

describe("SessionStream", () => {
  it("sends commands with ids and resolves each answer by its id", async () => {
    const { socket, stream } = await opened();
    const first = stream.step({ action: 1 });
    const second = stream.snapshot();
    expect(socket.sent).toEqual([{ id: 1, op: "step", action: 1 }, { id: 2, op: "snapshot" }]);
    socket.answer({ id: 2, op: "snapshot", result: { handle: "h" } });
    socket.answer({ id: 1, op: "step", result: { reward: 1, terminated: false, truncated: false, info: {}, observation: null } });
    expect((await second).result.handle).toBe("h");
    const step = await first;
    expect(step.result.reward).toBe(1);
    expect(step.frame).toBeNull();
  });

  it("pairs a frame-announcing answer with the next binary message", async () => {
    const { socket, stream } = await opened();
    const reply = stream.reset({ seed: 3, frame: true, observation: "none" });
    expect(socket.sent[0]).toEqual({ id: 1, op: "reset", seed: 3, frame: true, observation: "none" });
    socket.answer({ id: 1, op: "reset", result: { observation: null, info: {}, frame: { mime: "image/jpeg", width: 4, height: 2, size: 3 } } });
    let settled = false;
    void reply.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false); // waits for the bytes
    socket.bytes(new Uint8Array([0xff, 0xd8, 0xff]));
    const { frame } = await reply;
    expect(frame?.width).toBe(4);
    expect(frame?.blob.type).toBe("image/jpeg");
    expect(new Uint8Array(await frame!.blob.arrayBuffer())).toEqual(new Uint8Array([0xff, 0xd8, 0xff]));
  });

  it("refuses a command with the gateway's error and stays open", async () => {
    const { socket, stream } = await opened();
    const reply = stream.step({ action: 9 });
    socket.answer({ id: 1, op: "step", error: { status: 422, code: "invalid_argument", detail: "9 is not in Discrete(2)" } });
    await expect(reply).rejects.toMatchObject({ status: 422, message: "9 is not in Discrete(2)" });
    expect(stream.state).toBe("open");
  });

  it("goes crashed on a 410 with the log tail, refusing what still waits", async () => {
    const { socket, stream } = await opened();
    const states: string[] = [];
    stream.onState((s) => states.push(s));
    const a = stream.step({ action: 0 });
    const b = stream.step({ action: 0 });
    socket.answer({ id: 1, op: "step", error: { status: 410, code: "unavailable", detail: "the instance died", log_tail: "Traceback\nboom" } });
    await expect(a).rejects.toBeInstanceOf(StreamError);
    await expect(b).rejects.toMatchObject({ status: 410, logTail: "Traceback\nboom" });
    expect(stream.state).toBe("crashed");
    expect(stream.logTail).toBe("Traceback\nboom");
    socket.emit("close", { code: 4410, reason: "the instance died" });
    expect(states).toEqual(["crashed"]);
    await expect(stream.step({ action: 0 })).rejects.toMatchObject({ status: 410 });
  });

  it("a close with 4410 alone is a crash too; another close is closed", async () => {
    const crashed = await opened();
    const waiting = crashed.stream.render();
    crashed.socket.emit("close", { code: 4410, reason: "session s-1 crashed" });
    expect(crashed.stream.state).toBe("crashed");
    await expect(waiting).rejects.toMatchObject({ status: 410, message: "session s-1 crashed" });

    const other = await opened();
    other.socket.emit("close", { code: 1011, reason: "" });
    expect(other.stream.state).toBe("closed");
  });

  it("close() closes the socket and refuses later commands", async () => {
    const { socket, stream } = await opened();
    const waiting = stream.step({ action: 0 });
    stream.close();
    expect(socket.closed?.code).toBe(1000);
    await expect(waiting).rejects.toMatchObject({ status: 499 });
    await expect(stream.snapshot()).rejects.toMatchObject({ status: 499 });
  });

  it("rejects open when the socket closes before opening", async () => {
    const socket = new FakeSocket();
    const pending = SessionStream.open("gone", { url: "ws://x", connect: () => socket as unknown as WebSocket });
    socket.emit("close", { code: 4404, reason: "session gone not found" });
    await expect(pending).rejects.toMatchObject({ status: 404, message: "session gone not found" });
  });

  it("builds ws: and wss: URLs from the page's origin", () => {
    expect(streamUrl("a b", null, new URL("http://h:8000/x"))).toBe("ws://h:8000/v0/sessions/a%20b/stream");
    expect(streamUrl("s", "t&k", new URL("https://h/"))).toBe("wss://h/v0/sessions/s/stream?token=t%26k");
  });
});

const BOX = { type: "box", dtype: "float32", shape: [2], low: -1, high: 1 };
const LABELS = { joints: [0, 2], speed: [2, 3] };

function f64Tensor(values: number[], shape: number[]) {
  return create(TensorSchema, { dtype: "f8", shape: shape.map(BigInt), data: new Uint8Array(new Float64Array(values).buffer) });
}

function stepAnswer(id: number, extra: Record<string, unknown> = {}) {
  const step = create(StepResponseSchema, {
    observation: create(ValueSchema, { kind: { case: "tensor", value: f64Tensor([1, 2, Infinity], [3]) } }),
    reward: 0.5,
    info: create(DataMapSchema, { fields: { score: create(DataSchema, { kind: { case: "integer", value: 7n } }) } }),
    frame: create(FrameSchema, { encoding: "jpeg", width: 4, height: 2, data: new Uint8Array([255, 216, 255]) }),
    ...extra,
  });
  return toBinary(EnvResponseSchema, create(EnvResponseSchema, { id: BigInt(id), result: { case: "step", value: step } }));
}

describe("SessionStream binary steps", () => {
  it("sends a step that asks for the whole observation as an EnvRequest and reads the EnvResponse", async () => {
    const { socket, stream } = await opened();
    expect(socket.binaryType).toBe("arraybuffer");
    expect(stream.useBinarySteps(BOX, LABELS)).toBe(true);
    const reply = stream.step({ action: [0.25, -0.5], frame: true, observation: "full" });
    expect(socket.sent).toEqual([]);
    const request = fromBinary(EnvRequestSchema, socket.sentBytes[0]);
    expect(request.id).toBe(1n);
    if (request.command.case !== "step") throw new Error(`sent ${request.command.case}, not a step`);
    const step = request.command.value;
    expect(step.action?.kind.case).toBe("tensor");
    expect(jsonFromValue(step.action)).toEqual([0.25, -0.5]);
    expect(step.render).toBe(true);
    expect(step.autoReset).toBe(false);
    socket.buffer(stepAnswer(1));
    const { result, frame, op } = await reply;
    expect(op).toBe("step");
    expect(result.observation).toEqual([1, 2, "inf"]);
    expect(result.reward).toBe(0.5);
    expect(result.info).toEqual({ score: 7 });
    expect(result.observation_labels).toEqual(LABELS);
    expect(frame?.width).toBe(4);
    expect(frame?.size).toBe(3);
    expect(new Uint8Array(await frame!.blob.arrayBuffer())).toEqual(new Uint8Array([255, 216, 255]));
  });

  it("gives an auto-reset's final observation and info in info, as a text step does", async () => {
    const { socket, stream } = await opened();
    stream.useBinarySteps(BOX);
    const reply = stream.step({ action: [0, 0], auto_reset: true });
    const autoReset = create(AutoResetSchema, {
      finalObservation: create(ValueSchema, { kind: { case: "tensor", value: f64Tensor([9], [1]) } }),
      finalInfo: create(DataMapSchema, { fields: { won: create(DataSchema, { kind: { case: "flag", value: true } }) } }),
      terminated: true,
    });
    socket.buffer(stepAnswer(1, { autoReset, terminated: true }));
    const { result } = await reply;
    expect(result.terminated).toBe(true);
    expect(result.info).toMatchObject({ final_obs: [9], final_info: { won: true } });
    expect(result.info.restarted).toBeUndefined();
  });

  it("keeps text steps for what binary steps do not carry: no observation, agent data", async () => {
    const { socket, stream } = await opened();
    stream.useBinarySteps(BOX);
    void stream.step({ action: [0, 0], observation: "none" });
    void stream.step({ action: [0, 0], agent: { policy: "x" } });
    expect(socket.sentBytes).toHaveLength(0);
    expect(socket.sent).toHaveLength(2);
  });

  it("refuses an action space it cannot encode", async () => {
    const { stream } = await opened();
    expect(stream.useBinarySteps({ type: "multi_discrete", nvec: [3, 3] })).toBe(false);
    expect(stream.binarySteps).toBe(false);
  });

  it("turns the env host's errors into the text answers' statuses; a 410 crashes the stream", async () => {
    const { socket, stream } = await opened();
    stream.useBinarySteps(BOX);
    const bad = stream.step({ action: [5, 5] });
    const error = (code: ErrorCode, message: string, id: number) =>
      toBinary(EnvResponseSchema, create(EnvResponseSchema, { id: BigInt(id), error: create(ErrorSchema, { code, message, logTail: "boom" }) }));
    socket.buffer(error(ErrorCode.INVALID_ACTION, "action [5, 5] is outside Box(-1, 1)", 1));
    await expect(bad).rejects.toMatchObject({ status: 422, code: "invalid_action", field: "action" });
    expect(stream.state).toBe("open");
    const dead = stream.step({ action: [0, 0] });
    socket.buffer(error(ErrorCode.UNAVAILABLE, "the instance died", 2));
    const refusal = await dead.catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(StreamError);
    expect(refusal).toMatchObject({ status: 410, logTail: "boom" });
    expect(stream.state).toBe("crashed");
  });

  it("goes back to text steps after a frame that is not a JPEG", async () => {
    const { socket, stream } = await opened();
    stream.useBinarySteps(BOX);
    const reply = stream.step({ action: [0, 0], frame: true });
    const raw = create(FrameSchema, { encoding: "rgb", width: 1, height: 1, data: new Uint8Array([1, 2, 3]) });
    socket.buffer(stepAnswer(1, { frame: raw }));
    expect((await reply).frame).toBeNull();
    expect(stream.binarySteps).toBe(false);
    void stream.step({ action: [0, 0], frame: true });
    expect(socket.sent).toHaveLength(1);
  });
});
