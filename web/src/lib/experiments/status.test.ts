import { describe, expect, it } from "vitest";
import {
  durationText, exitCodeText, gpusText, isActive, refreshMs, sourceView, statusLabel, statusView, timeText, waitedText,
} from "./status";

describe("an experiment's status", () => {
  it("has a label and a colour", () => {
    expect(statusView("running")).toEqual({ label: "Running", tone: "running" });
    expect(statusView("succeeded")).toEqual({ label: "Succeeded", tone: "good" });
    expect(statusView("failed").tone).toBe("bad");
    expect(statusView("lost").tone).toBe("bad");
    expect(statusView("cancelled").tone).toBe("muted");
  });

  it("says a queued one's place on its machine's queue", () => {
    expect(statusLabel({ status: "queued", queue_position: 1 })).toBe("Queued (position 1)");
    expect(statusLabel({ status: "queued", queue_position: 3 })).toBe("Queued (position 3)");
    expect(statusLabel({ status: "queued", queue_position: 0 })).toBe("Queued");
    expect(statusLabel({ status: "running", queue_position: 0 })).toBe("Running");
    expect(statusView("queued").tone).toBe("muted");
    expect(refreshMs([{ status: "succeeded" }, { status: "queued" }])).toBe(3000);  // its page follows it to Running
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
    expect(waitedText({ created_at: 100 }, 165)).toBe("1 min 5 s");  // queued since it was made
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
    expect(gpusText({ gpus: 1, gpu_indices: [0], share_gpus: true })).toBe("GPU 0 (shared)");
  });

  it("says how many it asked for before they are assigned (queued)", () => {
    expect(gpusText({ gpus: 2, gpu_indices: [] })).toBe("2 GPUs asked for");
    expect(gpusText({ gpus: 1, gpu_indices: [], share_gpus: true })).toBe("1 GPU asked for (shared)");
  });
});

describe("an experiment's code", () => {
  it("is a repository at its ref, or a folder of the platform's host", () => {
    expect(sourceView({ repository: "https://github.com/acme/train.git", ref: "v2", folder: "" }))
      .toEqual({ kind: "repository", where: "https://github.com/acme/train.git", ref: "v2" });
    expect(sourceView({ repository: "", ref: "", folder: "/srv/code/train" }))
      .toEqual({ kind: "folder", where: "/srv/code/train", ref: "" });
  });
});
