import { describe, expect, it } from "vitest";
import { FrameCache } from "./frameCache";

describe("frame cache", () => {
  it("evicts the least recently used URL, revoking it, but never the frame on screen", () => {
    const revoked: string[] = [];
    const cache = new FrameCache(2, (u) => revoked.push(u));
    cache.put(1, "u1");
    cache.put(2, "u2");
    cache.get(1); // 2 is now the oldest
    cache.put(3, "u3");
    expect(revoked).toEqual(["u2"]);
    expect(cache.rows()).toEqual([1, 3]);
    cache.markShown(1);
    cache.get(3);
    cache.put(4, "u4"); // 1 is oldest but on screen: 3 goes
    expect(revoked).toEqual(["u2", "u3"]);
    expect(cache.has(1)).toBe(true);
    cache.clear();
    expect(revoked.sort()).toEqual(["u1", "u2", "u3", "u4"]);
  });
});
