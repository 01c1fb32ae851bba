import { describe, expect, it } from "vitest";
import { durationText, exitCodeText, gpusText, isActive, refreshMs, statusView, timeText } from "./status";

describe("an experiment's status", () => {
  it("has a label and a colour", () => {
    expect(statusView("running")).toEqual({ label: "Running", tone: "running" });
    expect(statusView("succeeded")).toEqual({ label: "Succeeded", tone: "good" });
    expect(statusView("failed").tone).toBe("bad");
    expect(statusView("lost").tone).toBe("bad");
    expect(statusView("cancelled").tone).toBe("muted");
  });

  it("is active while queued, starting or running, and the pages ask again only then", () => {
    expect(["queued", "starting", "running"].every((s) => isActive(s as never))).toBe(true);
    expect(["succeeded", "failed", "cancelled", "lost"].some((s) => isActive(s as never))).toBe(false);
    expect(refreshMs(null)).toBeNull();
    expect(refreshMs([{ status: "succeeded" }, { status: "failed" }])).toBeNull();
    expect(refreshMs([{ status: "succeeded" }, { status: "running" }])).toBe(3000);
  });
});

describe("an experiment's times, exit code and GPUs", () => {
  it("writes times in UTC and how long it ran", () => {
    expect(timeText(0)).toBe("–");
    expect(timeText(1_900_000_000)).toBe("2030-03-17 17:46:40");
    expect(durationText({ started_at: 0, ended_at: 0 }, 100)).toBe("–");
    expect(durationText({ started_at: 100, ended_at: 112.4 }, 999)).toBe("12 s");
    expect(durationText({ started_at: 100, ended_at: 0 }, 284)).toBe("3 min 4 s");
    expect(durationText({ started_at: 0.5, ended_at: 7500.5 }, 0)).toBe("2 h 5 min");
  });

  it("says the exit code, none once it ended without one, nothing before", () => {
    expect(exitCodeText({ exit_code: 0, ended_at: 5 })).toBe("0");
    expect(exitCodeText({ exit_code: 3, ended_at: 5 })).toBe("3");
    expect(exitCodeText({ exit_code: null, ended_at: 5 })).toBe("none (it ended without one)");
    expect(exitCodeText({ exit_code: null, ended_at: 0 })).toBe("–");
  });

  it("names the GPUs by index", () => {
    expect(gpusText({ gpus: 0, gpu_indices: [] })).toBe("none");
    expect(gpusText({ gpus: 1, gpu_indices: [1] })).toBe("GPU 1");
    expect(gpusText({ gpus: 2, gpu_indices: [0, 1] })).toBe("GPUs 0, 1");
  });
});
