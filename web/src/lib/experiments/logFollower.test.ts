import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ExperimentLogPage } from "../../api/experiments";
import { logStreamUrl } from "../../api/experiments";
import { type FollowState, followText, LogFollower } from "./logFollower";

/** A WebSocket stand-in: the test plays the gateway's part. */
class FakeSocket {
  closed: number | null = null;
  private listeners = new Map<string, Set<(event: unknown) => void>>();
  constructor(readonly url: string) {}
  addEventListener(type: string, listener: (event: unknown) => void) {
    if (!this.listeners.has(type)) this.listeners.set(type, new Set());
    this.listeners.get(type)!.add(listener);
  }
  emit(type: string, event: unknown) {
    for (const listener of [...(this.listeners.get(type) ?? [])]) listener(event);
  }
  close(code?: number) {
    this.closed = code ?? 1005;
  }
  page(offset: number, text: string, ended = false) {
    const page: ExperimentLogPage = { offset, next_offset: offset + new TextEncoder().encode(text).length, text, ended, status: ended ? "succeeded" : "running" };
    this.emit("message", { data: JSON.stringify(page) });
  }
  drop(code = 1006, reason = "") {
    this.emit("close", { code, reason });
  }
}

function follow(offset = 0) {
  const sockets: FakeSocket[] = [];
  const states: FollowState[] = [];
  let text = "";
  const follower = new LogFollower({
    offset,
    url: (from) => `ws://h/v0/experiments/x-1/logs/stream?offset=${from}`,
    connect: (url) => {
      const socket = new FakeSocket(url);
      sockets.push(socket);
      return socket as unknown as WebSocket;
    },
    onPage: (page) => { text += page.text; },
    onState: (state) => states.push(state),
  });
  follower.start();
  return { follower, sockets, states, text: () => text, last: () => states[states.length - 1] };
}

describe("following an experiment's log", () => {
  beforeEach(() => { vi.useFakeTimers(); });
  afterEach(() => { vi.useRealTimers(); });

  it("appends each piece and stops after the one that ends it", () => {
    const { follower, sockets, text, last } = follow();
    expect(sockets[0].url).toBe("ws://h/v0/experiments/x-1/logs/stream?offset=0");
    expect(last()).toEqual({ phase: "connecting", again: false, attempt: 1 });
    sockets[0].emit("open", {});
    expect(last()).toEqual({ phase: "following" });
    sockets[0].page(0, "line 1\n");
    sockets[0].page(7, "línea 2\n");
    expect(follower.offset).toBe(16);
    sockets[0].page(16, "", true);
    expect(text()).toBe("line 1\nlínea 2\n");
    expect(last()).toEqual({ phase: "ended" });
    expect(sockets[0].closed).toBe(1000);
    sockets[0].drop(1000);
    vi.advanceTimersByTime(60_000);
    expect(sockets).toHaveLength(1);
  });

  it("opens the stream again at the last next_offset after a drop, waiting longer each failed try", () => {
    const { sockets, text, last } = follow(5);
    sockets[0].emit("open", {});
    sockets[0].page(5, "b\n");
    sockets[0].drop();
    expect(last()).toEqual({ phase: "reconnecting", inMs: 1000, offset: 7 });
    vi.advanceTimersByTime(999);
    expect(sockets).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(sockets[1].url).toBe("ws://h/v0/experiments/x-1/logs/stream?offset=7");
    expect(last()).toEqual({ phase: "connecting", again: true, attempt: 1 });
    sockets[1].drop(1006);  // the gateway still down
    expect(last()).toMatchObject({ phase: "reconnecting", inMs: 1000 });
    vi.advanceTimersByTime(1000);
    sockets[2].drop(1011, "machines unavailable");
    expect(last()).toMatchObject({ phase: "reconnecting", inMs: 2000 });
    vi.advanceTimersByTime(2000);
    expect(last()).toEqual({ phase: "connecting", again: true, attempt: 3 });
    sockets[3].emit("open", {});
    sockets[3].page(7, "c\n", true);
    expect(text()).toBe("b\nc\n");
    expect(sockets.map((s) => s.url.split("offset=")[1])).toEqual(["5", "7", "7", "7"]);
  });

  it("waits at most 10 s between tries, and a piece received starts the count again", () => {
    const { sockets, last } = follow();
    for (let i = 0; i < 6; i += 1) {
      sockets[i].drop();
      vi.advanceTimersByTime(10_000);
    }
    expect(last()).toEqual({ phase: "connecting", again: true, attempt: 7 });
    sockets[6].drop();
    expect(last()).toMatchObject({ inMs: 10_000 });
    vi.advanceTimersByTime(10_000);
    sockets[7].page(0, "x\n");
    sockets[7].drop();
    expect(last()).toMatchObject({ phase: "reconnecting", inMs: 1000, offset: 2 });
  });

  it("gives up on a refused token or an unknown experiment, with the reason", () => {
    const refused = follow();
    refused.sockets[0].drop(4401, "token revoked");
    expect(refused.last()).toEqual({ phase: "failed", code: 4401, reason: "token revoked" });
    const unknown = follow();
    unknown.sockets[0].drop(4404, "");
    expect(unknown.last()).toEqual({ phase: "failed", code: 4404, reason: "no such experiment" });
    vi.advanceTimersByTime(60_000);
    expect(refused.sockets).toHaveLength(1);
    expect(unknown.sockets).toHaveLength(1);
  });

  it("never shows a piece from another offset: it opens again at its own", () => {
    const { sockets, text, last } = follow();
    sockets[0].page(0, "a\n");
    sockets[0].page(0, "a\n");  // a repeat
    expect(text()).toBe("a\n");
    expect(sockets[0].closed).toBe(1000);
    expect(last()).toMatchObject({ phase: "reconnecting", offset: 2 });
    vi.advanceTimersByTime(1000);
    expect(sockets[1].url).toContain("offset=2");
  });

  it("stop() closes the socket and calls back no more", () => {
    const { follower, sockets, states } = follow();
    follower.stop();
    expect(sockets[0].closed).toBe(1000);
    const seen = states.length;
    sockets[0].page(0, "late\n");
    sockets[0].drop();
    vi.advanceTimersByTime(60_000);
    expect(states).toHaveLength(seen);
    expect(sockets).toHaveLength(1);
  });

  it("says what it is doing", () => {
    expect(followText({ phase: "connecting", again: false, attempt: 1 })).toBe("Opening the log…");
    expect(followText({ phase: "connecting", again: true, attempt: 1 })).toBe("Opening the log again…");
    expect(followText({ phase: "connecting", again: true, attempt: 3 })).toBe("Opening the log again (try 3)…");
    expect(followText({ phase: "following" })).toBe("Following the log live");
    expect(followText({ phase: "reconnecting", inMs: 1000, offset: 120 })).toBe(
      "The connection dropped: opening it again at byte 120 in 1 s");
    expect(followText({ phase: "ended" })).toBe("The whole log");
    expect(followText({ phase: "failed", code: 4404, reason: "no such experiment" })).toBe(
      "The log cannot be followed: no such experiment");
  });
});

describe("the stream's URL", () => {
  it("is ws: or wss: like the page, from an offset, with the token when there is one", () => {
    expect(logStreamUrl("x-1", 0, null, new URL("http://h:8000/experiments/x-1"))).toBe(
      "ws://h:8000/v0/experiments/x-1/logs/stream?offset=0");
    expect(logStreamUrl("x-1", 42, "sim_a&b", new URL("https://h/"))).toBe(
      "wss://h/v0/experiments/x-1/logs/stream?offset=42&token=sim_a%26b");
  });
});
