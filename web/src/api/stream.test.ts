import { describe, expect, it } from "vitest";
import { SessionStream, StreamError, streamUrl } from "./stream";

/** A WebSocket stand-in: records what is sent, and lets the test play the gateway's part. */
class FakeSocket {
  sent: Record<string, unknown>[] = [];
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
  send(text: string) {
    this.sent.push(JSON.parse(text) as Record<string, unknown>);
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
