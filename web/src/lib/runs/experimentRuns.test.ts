import { describe, expect, it } from "vitest";
import {
  degraded, ENDED_GRACE_S, headlineMetric, roleLabel, rolesOf, RUNS_REFRESH_MS, runsRefreshMs, seriesKey, summaryText,
} from "./experimentRuns";

describe("rolesOf", () => {
  it("groups roles/<role>/<field> entries by role, env runners, learners and replay first", () => {
    const rows = rolesOf({
      "roles/replay/size": 5000,
      "roles/learners/local": true,
      "roles/learners/count": 1,
      "roles/env_runners/nodes": "10.0.0.2, 10.0.0.3",
      "roles/env_runners/healthy": 3,
      "roles/env_runners/count": 4,
      "roles/aggregators/count": 2,
      "best_return": 480,
      "roles/bad": 1,
    });
    expect(rows).toEqual([
      { role: "env_runners", count: 4, healthy: 3, where: "10.0.0.2, 10.0.0.3", other: [] },
      { role: "learners", count: 1, healthy: null, where: "local", other: [] },
      { role: "replay", count: null, healthy: null, where: "–", other: [["size", 5000]] },
      { role: "aggregators", count: 2, healthy: null, where: "–", other: [] },
    ]);
  });

  it("says remote for learners that are not local, and ignores empty nodes", () => {
    expect(rolesOf({ "roles/learners/local": false, "roles/learners/count": 2 })[0].where).toBe("remote");
    expect(rolesOf({ "roles/env_runners/nodes": " ", "roles/env_runners/count": 1 })[0].where).toBe("–");
  });

  it("is empty for a run without roles", () => {
    expect(rolesOf({})).toEqual([]);
    expect(rolesOf(null)).toEqual([]);
    expect(rolesOf({ "episode/score": 3 })).toEqual([]);
  });

  it("takes only numbers as counts", () => {
    expect(rolesOf({ "roles/x/count": "3", "roles/x/healthy": null })[0]).toMatchObject({ count: null, healthy: null });
  });
});

describe("the table's words", () => {
  it("names roles and values", () => {
    expect(roleLabel("env_runners")).toBe("env runners");
    expect(summaryText(null)).toBe("–");
    expect(summaryText("")).toBe("–");
    expect(summaryText(0)).toBe("0");
    expect(summaryText(false)).toBe("false");
  });

  it("marks a role with fewer healthy than counted", () => {
    expect(degraded({ count: 4, healthy: 3 })).toBe(true);
    expect(degraded({ count: 4, healthy: 4 })).toBe(false);
    expect(degraded({ count: 4, healthy: null })).toBe(false);
  });
});

describe("headlineMetric", () => {
  it("prefers RLlib's mean episode return, then the runner's score, then the first metric", () => {
    expect(headlineMetric(["a", "episode/score", "env_runners/episode_return_mean"])).toBe("env_runners/episode_return_mean");
    expect(headlineMetric(["a", "episode/score"])).toBe("episode/score");
    expect(headlineMetric(["b/loss", "c"])).toBe("b/loss");
    expect(headlineMetric([])).toBe("");
  });
});

describe("runsRefreshMs", () => {
  const now = 10_000;
  it("polls while the experiment is active or not loaded yet", () => {
    expect(runsRefreshMs(null, null, now)).toBe(RUNS_REFRESH_MS);
    expect(runsRefreshMs({ active: true, ended_at: 0 }, [{ state: "finished" }], now)).toBe(RUNS_REFRESH_MS);
  });

  it("stops once it has ended and its runs are finished", () => {
    expect(runsRefreshMs({ active: false, ended_at: now - 1 }, [{ state: "finished" }, { state: "failed" }], now)).toBeNull();
    expect(runsRefreshMs({ active: false, ended_at: now - 1 }, [], now)).toBeNull();
  });

  it("keeps polling a run still running for a while after the end, then gives up", () => {
    const runs = [{ state: "finished" }, { state: "running" }];
    expect(runsRefreshMs({ active: false, ended_at: now - 5 }, runs, now)).toBe(RUNS_REFRESH_MS);
    expect(runsRefreshMs({ active: false, ended_at: now - ENDED_GRACE_S }, runs, now)).toBeNull();
  });
});

describe("seriesKey", () => {
  it("changes when the run logs a later point of the metric", () => {
    const run = (last: number) => ({ id: "run-1", metrics: [{ name: "m", last_step: last }] });
    expect(seriesKey(run(3), "m")).not.toBe(seriesKey(run(4), "m"));
    expect(seriesKey(run(3), "m")).toBe(seriesKey(run(3), "m"));
    expect(seriesKey(run(3), "other")).toBe("run-1\nother\n-1");
  });
});
