import { describe, expect, it } from "vitest";
import { prefetchRows, prefetchWindow } from "./prefetch";

describe("prefetch", () => {
  it("fetches nearest first, both ways when paused", () => {
    expect(prefetchRows(5, 100, { ahead: 2, behind: 2, stride: 1 })).toEqual([5, 6, 4, 7, 3]);
    expect(prefetchRows(0, 3, { ahead: 5, behind: 5, stride: 1 })).toEqual([0, 1, 2]);
    expect(prefetchRows(99, 100, { ahead: 2, behind: 1, stride: 1 })).toEqual([99, 98]);
    expect(prefetchRows(4, 0, prefetchWindow(false, 30))).toEqual([]);
  });

  it("looks further ahead while playing, with a stride when playing fast", () => {
    expect(prefetchRows(10, 1000, { ahead: 4, behind: 1, stride: 1 })).toEqual([10, 11, 12, 13, 14, 9]);
    expect(prefetchRows(10, 1000, { ahead: 3, behind: 0, stride: 4 })).toEqual([10, 14, 18, 22]);
    expect(prefetchWindow(true, 120).stride).toBe(4);
    expect(prefetchWindow(true, 15).stride).toBe(1);
    const playing = prefetchRows(500, 10_000, prefetchWindow(true, 30));
    expect(playing.filter((r) => r > 500).length).toBeGreaterThan(playing.filter((r) => r < 500).length);
  });
});
