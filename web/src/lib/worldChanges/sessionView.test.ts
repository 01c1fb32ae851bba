import { describe, expect, it } from "vitest";
import { followsAfter, LOADING_WORLD_CHANGES, stopsFollowing, viewAfterFailure, viewOfAnswer, type WorldChangesView } from "./sessionView";

const timeline = [{ at: 3, change: "mass", body: "hand", scale: 2 }];
const applied = [{ ...timeline[0], index: 0, session_step: 3, seq: 0, time: 1 }];

describe("viewOfAnswer", () => {
  it("the timeline's rows with how many changes applied", () => {
    expect(viewOfAnswer({ timeline, applied })).toEqual({
      state: "ready",
      rows: [{ index: 0, at: 3, label: 'mass (body="hand", scale=2)', appliedAt: [3] }],
      applied: 1,
    });
  });

  it("none for a session without a timeline, after which the page stops asking", () => {
    const view = viewOfAnswer({ timeline: [], applied: [] });
    expect(view).toEqual({ state: "none" });
    expect(followsAfter(view)).toBe(false);
    expect(followsAfter(viewOfAnswer({ timeline, applied: [] }))).toBe(true);
  });
});

describe("a failed call", () => {
  const ready: WorldChangesView = viewOfAnswer({ timeline, applied });

  it("shows the error's detail", () => {
    expect(viewAfterFailure(LOADING_WORLD_CHANGES, { status: 500, detail: "the broker is down", code: "unknown" }))
      .toEqual({ state: "error", message: "the broker is down" });
    expect(viewAfterFailure(ready, new Error("offline"))).toEqual({ state: "error", message: "offline" });
  });

  it("a session gone (410) keeps the rows it had", () => {
    const gone = { status: 410, detail: "the session is gone", code: "gone" };
    expect(viewAfterFailure(ready, gone)).toBe(ready);
    expect(viewAfterFailure(LOADING_WORLD_CHANGES, gone)).toEqual({ state: "error", message: "the session is gone" });
  });

  it("stops the asking only when the session is unknown or gone", () => {
    expect(stopsFollowing({ status: 404 })).toBe(true);
    expect(stopsFollowing({ status: 410 })).toBe(true);
    expect(stopsFollowing({ status: 503 })).toBe(false);
    expect(stopsFollowing(new Error("offline"))).toBe(false);
    expect(stopsFollowing(null)).toBe(false);
  });
});
