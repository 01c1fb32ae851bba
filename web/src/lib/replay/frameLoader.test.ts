import { describe, expect, it, vi } from "vitest";
import { FrameLoader } from "./frameLoader";

function fakeFetches() {
  const started: number[] = [];
  const aborted: number[] = [];
  const finish = new Map<number, () => void>();
  const fetchFrame = (row: number, signal: AbortSignal) =>
    new Promise<Blob>((resolve) => {
      started.push(row);
      signal.addEventListener("abort", () => aborted.push(row));
      finish.set(row, () => resolve(new Blob([String(row)])));
    });
  return { started, aborted, finish, fetchFrame };
}

describe("frame loader", () => {
  it("fetches the frame to show first, then prefetches a few at a time, aborting unwanted rows", async () => {
    const f = fakeFetches();
    const loaded: number[] = [];
    const loader = new FrameLoader({
      fetchFrame: f.fetchFrame, createUrl: (blob) => `blob:${blob.size}`, revokeUrl: () => {},
      concurrency: 2, onLoaded: (row) => loaded.push(row),
    });
    loader.want([5, 6, 4, 7]);
    expect(f.started).toEqual([5]); // prefetches wait for the frame on screen
    f.finish.get(5)!();
    await vi.waitFor(() => expect(loaded).toEqual([5]));
    expect(f.started).toEqual([5, 6, 4]);
    loader.want([40, 41, 4]); // the scrubber moved: 6 is no longer wanted, 4 still is
    expect(f.aborted).toEqual([6]);
    expect(f.started).toEqual([5, 6, 4, 40]); // the new frame at once, beside the prefetch still wanted
    f.finish.get(40)!();
    await vi.waitFor(() => expect(loaded).toEqual([5, 40]));
    expect(f.started).toEqual([5, 6, 4, 40, 41]);
    expect(loader.url(5)).toBe("blob:1");
    loader.dispose();
    expect(f.aborted).toEqual([6, 4, 41]);
  });

  it("does not ask again for a row that failed", async () => {
    let calls = 0;
    const errors: number[] = [];
    const loader = new FrameLoader({
      fetchFrame: () => { calls++; return Promise.reject(new Error("404")); },
      createUrl: () => "", revokeUrl: () => {}, onError: (row) => errors.push(row),
    });
    loader.want([4]);
    await vi.waitFor(() => expect(errors).toEqual([4]));
    loader.want([4]);
    expect(calls).toBe(1);
  });
});
