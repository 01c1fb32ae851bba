import { describe, expect, it } from "vitest";
import type { UsageRow } from "../../api/managed";
import { usagePath } from "../../api/managed";
import {
  dayMs, daysBetween, formatHours, rangeProblem, sortedRows, thisMonth, usageChart, usageTotals, utcToday,
} from "./usage";

const row = (day: string, env_id: string, instance_hours: number, sessions = 1, team = "default"): UsageRow =>
  ({ day, team, env_id, instance_hours, sessions });

describe("the range", () => {
  it("defaults to this UTC month so far", () => {
    expect(thisMonth(new Date("2026-12-03T17:00:00Z"))).toEqual({ since: "2026-12-01", until: "2026-12-03" });
    // 23:30 on the 31st in New York is already the 1st in UTC
    expect(thisMonth(new Date("2027-01-01T04:30:00Z"))).toEqual({ since: "2027-01-01", until: "2027-01-01" });
    expect(utcToday(new Date("2026-02-28T23:59:59Z"))).toBe("2026-02-28");
  });

  it("takes real days only, in order", () => {
    expect(dayMs("2026-02-29")).toBeNull();
    expect(dayMs("2026-2-1")).toBeNull();
    expect(dayMs("2024-02-29")).toBe(Date.UTC(2024, 1, 29));
    expect(rangeProblem("2026-12-01", "2026-12-03")).toBeNull();
    expect(rangeProblem("2026-12-04", "2026-12-03")).toBe("the last day is before the first");
    expect(rangeProblem("", "2026-12-03")).toBe("choose the first day");
  });

  it("lists every day, both ends included, across months", () => {
    expect(daysBetween("2026-11-29", "2026-12-02")).toEqual(["2026-11-29", "2026-11-30", "2026-12-01", "2026-12-02"]);
    expect(daysBetween("2026-12-02", "2026-12-02")).toEqual(["2026-12-02"]);
    expect(daysBetween("2026-12-03", "2026-12-02")).toEqual([]);
    expect(daysBetween("2020-01-01", "2026-01-01")).toEqual([]); // over the chart's limit
  });

  it("is the query of the JSON and CSV answers", () => {
    expect(usagePath({ since: "2026-12-01", until: "2026-12-31" })).toBe("/v0/usage?since=2026-12-01&until=2026-12-31");
    expect(usagePath({ since: "2026-12-01", until: "2026-12-31", team: "ml team" }, "csv"))
      .toBe("/v0/usage?since=2026-12-01&until=2026-12-31&team=ml+team&format=csv");
  });
});

describe("the table", () => {
  const rows = [
    row("2026-12-02", "pendulum", 0.5, 2, "b"), row("2026-12-01", "pendulum", 1), row("2026-12-02", "cartpole", 2, 1, "b"),
    row("2026-12-02", "cartpole", 0.25, 3, "a"),
  ];

  it("is by day, team and environment", () => {
    expect(sortedRows(rows).map((r) => `${r.day} ${r.team} ${r.env_id}`)).toEqual([
      "2026-12-01 default pendulum", "2026-12-02 a cartpole", "2026-12-02 b cartpole", "2026-12-02 b pendulum",
    ]);
    expect(rows[0].day).toBe("2026-12-02"); // the answer itself is left as it came
  });

  it("adds up instance-hours, session-days and each environment's hours", () => {
    expect(usageTotals(rows)).toEqual({
      instanceHours: 3.75, sessionDays: 7,
      byEnv: [{ envId: "cartpole", instanceHours: 2.25 }, { envId: "pendulum", instanceHours: 1.5 }],
    });
    expect(usageTotals([])).toEqual({ instanceHours: 0, sessionDays: 0, byEnv: [] });
  });

  it("shows hours to their first digits", () => {
    expect(formatHours(0)).toBe("0");
    expect(formatHours(0.00003)).toBe("< 0.0001");
    expect(formatHours(0.0042)).toBe("0.0042");
    expect(formatHours(1.23456)).toBe("1.23");
    expect(formatHours(1234.56)).toBe("1234.6");
  });
});

describe("the chart", () => {
  it("stacks each day's environments, the largest at the bottom, teams added", () => {
    const chart = usageChart([
      row("2026-12-01", "pendulum", 1), row("2026-12-03", "cartpole", 2, 1, "a"), row("2026-12-03", "cartpole", 1, 1, "b"),
      row("2026-12-03", "pendulum", 0.5),
    ], "2026-12-01", "2026-12-04");
    expect(chart.days).toEqual(["2026-12-01", "2026-12-02", "2026-12-03", "2026-12-04"]);
    expect(chart.envs).toEqual(["cartpole", "pendulum"]);
    expect(chart.hours).toEqual([[0, 0, 3, 0], [1, 0, 0.5, 0]]);
    expect(chart.tops).toEqual([[0, 0, 3, 0], [1, 0, 3.5, 0]]);
  });

  it("keeps only the days with usage over a very long range", () => {
    const chart = usageChart([row("2021-05-01", "a", 1), row("2025-05-01", "a", 2)], "2020-01-01", "2026-01-01");
    expect(chart.days).toEqual(["2021-05-01", "2025-05-01"]);
    expect(chart.tops).toEqual([[1, 2]]);
  });

  it("is empty without usage", () => {
    const chart = usageChart([], "2026-12-01", "2026-12-02");
    expect(chart.envs).toEqual([]);
    expect(chart.days).toHaveLength(2);
  });
});
