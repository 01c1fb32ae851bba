import { describe, expect, it, vi } from "vitest";
import { FrameLoader } from "./frameLoader";

describe("frame loader", () => {
  it("fetches wanted rows a few at a time, aborts unwanted ones, caches the rest", async () => {
    const started: number[] = [];
    const aborted: number[] = [];
    const resolvers = new Map<number, () => void>();
    const loaded: number[] = [];
    const loader = new FrameLoader({
      fetchFrame: (row, signal) =>
        new Promise<Blob>((resolve) => {
          started.push(row);
          signal.addEventListener("abort", () => aborted.push(row));
          resolvers.set(row, () => resolve(new Blob([String(row)])));
        }),
      createUrl: (blob) => `blob:${blob.size}`,
      revokeUrl: () => {},
      concurrency: 2,
      onLoaded: (row) => loaded.push(row),
    });
    loader.want([1, 2, 3]);
    expect(started).toEqual([1, 2]);
    resolvers.get(1)!();
    await vi.waitFor(() => expect(loaded).toEqual([1]));
    expect(started).toEqual([1, 2, 3]);
    loader.want([7, 3]);
    expect(aborted).toEqual([2]);
    expect(started).toEqual([1, 2, 3, 7]);
    expect(loader.url(1)).toBe("blob:1");
    loader.dispose();
    expect(aborted).toEqual([2, 3, 7]);
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
