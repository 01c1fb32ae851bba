import { describe, expect, it } from "vitest";
import { sameZoom, zoomOf } from "./zoom";

describe("plot zoom", () => {
  it("keeps a dragged range in whole steps within the episode", () => {
    expect(zoomOf({ min: 120.4, max: 340.6 }, 0, 10_300)).toEqual({ min: 120, max: 341 });
    expect(zoomOf({ min: -5, max: 40 }, 0, 100)).toEqual({ min: 0, max: 40 });
  });

  it("is no zoom when the whole episode shows again (a double-click) or the range is empty", () => {
    expect(zoomOf({ min: 0, max: 10_300 }, 0, 10_300)).toBeNull();
    expect(zoomOf({ min: 1, max: 10_300 }, 0, 10_300)).toBeNull();
    expect(zoomOf({ min: 50, max: 50 }, 0, 100)).toBeNull();
    expect(zoomOf({ min: Number.NaN, max: 3 }, 0, 100)).toBeNull();
  });

  it("tells equal ranges apart from others", () => {
    expect(sameZoom(null, null)).toBe(true);
    expect(sameZoom({ min: 1, max: 2 }, { min: 1, max: 2 })).toBe(true);
    expect(sameZoom({ min: 1, max: 2 }, null)).toBe(false);
  });
});
