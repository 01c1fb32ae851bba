import { describe, expect, it } from "vitest";
import type { EvalSample } from "../../api/evals";
import {
  flatScores, chartDomain, compareMetrics, compareSamples, comparedIds, metricBars, recordingOf, sampleRows, scoreNumber,
  scoreValues,
} from "./results";
import { mainScore, numberText, progressText, valueText } from "./status";

const sample = (id: string, epoch: number, score: unknown): EvalSample => ({
  log: "a.eval", sample_id: id, epoch, input: `in ${id}`, target: "", answer: "", scores: { s: score }, tokens: 1,
  total_time: 1, working_time: 1, error: "", transcript_url: `/v/${id}/${epoch}`,
});
const score = (name: string, metrics: [string, number, number | null][]) => ({
  name, scorer: name, reducer: "", scored_samples: 2, unscored_samples: 0,
  metrics: metrics.map(([m, value, stderr]) => ({ name: m, value, stderr })),
});

describe("results", () => {
  it("lists every metric with its stderr", () => {
    expect(metricBars([score("utility", [["accuracy", 0.5, 0.29]])])).toEqual([
      { key: "utility/accuracy", score: "utility", metric: "accuracy", value: 0.5, stderr: 0.29 }]);
  });
  it("spans [0, 1] for scores in it, else every error bar", () => {
    expect(chartDomain([{ value: 0.5, stderr: 0.3 }])).toEqual([0, 1]);
    expect(chartDomain([{ value: 10, stderr: 2 }, { value: -1, stderr: null }])).toEqual([-1, 12]);
  });
  it("reads Inspect's score values as numbers", () => {
    expect([scoreNumber("C"), scoreNumber("I"), scoreNumber("P"), scoreNumber(true), scoreNumber("0.25"), scoreNumber({})])
      .toEqual([1, 0, 0.5, 1, 0.25, null]);
  });
  it("sorts samples by a score, unscored last, and filters by its value", () => {
    const samples = [sample("2", 1, "I"), sample("1", 1, "C"), sample("3", 1, undefined), sample("1", 2, "I")];
    expect(sampleRows(samples, "s", "descending", "").map((s) => `${s.sample_id}/${s.epoch}`)).toEqual(["1/1", "1/2", "2/1", "3/1"]);
    expect(sampleRows(samples, "s", "ascending", "").map((s) => `${s.sample_id}/${s.epoch}`)).toEqual(["1/2", "2/1", "1/1", "3/1"]);
    expect(sampleRows(samples, "s", "none", "I").map((s) => `${s.sample_id}/${s.epoch}`)).toEqual(["1/2", "2/1"]);
    expect(scoreValues(samples, "s")).toEqual(["C", "I"]);
  });
  it("puts several evals' metrics and samples side by side", () => {
    const a = { scores: [score("u", [["accuracy", 1, 0]])], samples: [sample("1", 1, "C")] };
    const b = { scores: [score("u", [["accuracy", 0.5, 0.5], ["mean", 2, null]])], samples: [sample("1", 1, "I"), sample("2", 1, "C")] };
    const metrics = compareMetrics([a, b]);
    expect(metrics.map((m) => [m.key, m.values.map((v) => v?.value ?? null)])).toEqual([["u/accuracy", [1, 0.5]], ["u/mean", [null, 2]]]);
    expect(compareSamples([a, b], "s").map((r) => [r.key, r.scores])).toEqual([["1#1", ["C", "I"]], ["2#1", [undefined, "C"]]]);
    expect(comparedIds(" a,b,,a ")).toEqual(["a", "b"]);
  });
  it("splits a scorer's dict value into its parts", () => {
    expect(flatScores({ bench: { utility: "I", security: "C" } })).toEqual({ utility: "I", security: "C" });
    expect(flatScores({ bench: { utility: "I" }, match: "C" })).toEqual({ "bench.utility": "I", match: "C" });
  });
  it("says progress and values in words", () => {
    expect(progressText({ phase: "running", total: 4, done: 1, errors: 0, tokens: 15 })).toBe("1 / 4 samples");
    expect(progressText({ phase: "preparing", total: 0, done: 0, errors: 0, tokens: 0 })).toBe("preparing its environment");
    expect(valueText(0.5, 0.28867)).toBe("0.5 ± 0.289");
    expect(numberText(12345)).toBe("1.23e+4");
    expect(mainScore({ scores: [score("utility", [["accuracy", 1, 0]])] })).toEqual({ label: "accuracy (utility)", text: "1 ± 0" });
  });
});

describe("recordingOf", () => {
  it("is the recording a sample of the platform's own task made, or empty", () => {
    expect(recordingOf({ metadata: { recording_id: "s-0123", session_id: "s-0123" } })).toBe("s-0123");
    expect(recordingOf({ metadata: {} })).toBe("");
    expect(recordingOf({ metadata: { recording_id: 7 } })).toBe("");
    expect(recordingOf({})).toBe("");
  });
});
