import { describe, expect, it } from "vitest";
import { rowStatus, timelineRows } from "./timeline";

describe("timelineRows", () => {
  const timeline = [
    { at: 3, change: "mass", body: "hand", scale: 2 },
    { at: 6, change: "mass", body: "hand", scale: 1 },
  ];

  it("each entry with the session steps it was applied at", () => {
    const applied = [{ ...timeline[0], index: 0, session_step: 3, seq: 0, time: 10 }];
    const rows = timelineRows(timeline, applied);
    expect(rows).toEqual([
      { index: 0, at: 3, label: 'mass (body="hand", scale=2)', appliedAt: [3] },
      { index: 1, at: 6, label: 'mass (body="hand", scale=1)', appliedAt: [] },
    ]);
    expect(rows.map(rowStatus)).toEqual(["applied at session step 3", "due at session step 6"]);
  });

  it("an entry met again after a restore is listed at each step", () => {
    const applied = [
      { ...timeline[0], index: 0, session_step: 3 },
      { ...timeline[0], index: 0, session_step: 3 },
    ];
    expect(rowStatus(timelineRows(timeline, applied)[0])).toBe("applied at session steps 3, 3");
  });

  it("nothing for a missing timeline; odd entries are still listed", () => {
    expect(timelineRows(undefined, undefined)).toEqual([]);
    expect(timelineRows([42], [])).toEqual([{ index: 0, at: null, label: "change", appliedAt: [] }]);
    expect(rowStatus({ index: 0, at: null, label: "change", appliedAt: [] })).toBe("not applied");
  });
});
