import { describe, expect, it } from "vitest";
import { appendLog, EMPTY_LOG } from "./logText";
import { isAtBottom } from "./autoScroll";

describe("the log the page holds", () => {
  it("appends what comes", () => {
    expect(appendLog(EMPTY_LOG, "a\n")).toEqual({ text: "a\n", dropped: 0 });
    const log = appendLog(EMPTY_LOG, "a\n");
    expect(appendLog(log, "")).toBe(log);
  });

  it("keeps the last characters, cut at a line, counting what it dropped", () => {
    const log = appendLog(appendLog(EMPTY_LOG, "line 1\nline 2\n", 16), "line 3\n", 16);
    expect(log).toEqual({ text: "line 2\nline 3\n", dropped: 7 });
    expect(appendLog(log, "line 4\n", 16)).toEqual({ text: "line 3\nline 4\n", dropped: 14 });
    expect(appendLog(EMPTY_LOG, "x".repeat(20), 16)).toEqual({ text: "x".repeat(16), dropped: 4 });
  });
});

describe("the log's auto-scroll", () => {
  it("follows at the bottom, within a little slack, and not once scrolled up", () => {
    expect(isAtBottom({ scrollTop: 600, clientHeight: 400, scrollHeight: 1000 })).toBe(true);
    expect(isAtBottom({ scrollTop: 580, clientHeight: 400, scrollHeight: 1000 })).toBe(true);
    expect(isAtBottom({ scrollTop: 300, clientHeight: 400, scrollHeight: 1000 })).toBe(false);
    expect(isAtBottom({ scrollTop: 0, clientHeight: 400, scrollHeight: 100 })).toBe(true);
  });
});
