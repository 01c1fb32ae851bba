// What the eval pages show of results: each score's metrics as bars with error bars (value ±
// stderr) on one scale, a sample's score as a number (Inspect's own reading of its values: "C"
// correct 1, "I" incorrect 0, "P" partial 0.5, true 1...), the samples sorted and filtered by a
// score, and the comparison of several evals: the metrics side by side and each sample's scores
// in one column per eval.
import type { EvalDetail, EvalSample, EvalScore } from "../../api/evals";

export interface Bar {
  key: string;  // "score/metric"
  score: string;
  metric: string;
  value: number;
  stderr: number | null;
}

/** Every metric of every score, in the eval's order. */
export function metricBars(scores: readonly EvalScore[]): Bar[] {
  return scores.flatMap((score) => score.metrics.map((metric) => ({
    key: `${score.name}/${metric.name}`, score: score.name, metric: metric.name, value: metric.value,
    stderr: metric.stderr ?? null,
  })));
}

/** The value range a chart spans: 0 included, every value ± its stderr inside; [0, 1] for scores in [0, 1]. */
export function chartDomain(bars: readonly Pick<Bar, "value" | "stderr">[]): [number, number] {
  let low = 0;
  let high = 0;
  for (const bar of bars) {
    const spread = bar.stderr ?? 0;
    low = Math.min(low, bar.value - spread);
    high = Math.max(high, bar.value + spread);
  }
  if (low >= 0 && high <= 1) return [0, 1];
  return high === low ? [low, low + 1] : [low, high];
}

const LETTERS: Record<string, number> = { C: 1, I: 0, P: 0.5, N: 0 };

/** A sample's score as a number, or null when it has none that reads as one. */
export function scoreNumber(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "string") {
    if (value in LETTERS) return LETTERS[value];
    const lowered = value.toLowerCase();
    if (lowered === "yes" || lowered === "true") return 1;
    if (lowered === "no" || lowered === "false") return 0;
    const parsed = Number(value);
    return value.trim() !== "" && Number.isFinite(parsed) ? parsed : null;
  }
  return null;
}

/** A sample's score as text: the value as the scorer gave it ("C", 0.5, {"a": 1} as JSON). */
export function scoreText(value: unknown): string {
  if (value === undefined || value === null) return "–";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** A sample's scores with a scorer's dict value split into its parts ({"utility": "I",
 * "security": "C"} -> utility and security; named "scorer.part" when the sample has more scores). */
export function flatScores(scores: Record<string, unknown>): Record<string, unknown> {
  const entries = Object.entries(scores);
  const flat: Record<string, unknown> = {};
  for (const [name, value] of entries) {
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      for (const [part, inner] of Object.entries(value)) flat[entries.length === 1 ? part : `${name}.${part}`] = inner;
    } else {
      flat[name] = value;
    }
  }
  return flat;
}

/** The samples with their dict scores split (flatScores), as the tables show them. */
export function flatSamples<T extends EvalSample>(samples: readonly T[]): T[] {
  return samples.map((s) => ({ ...s, scores: flatScores(s.scores) }));
}

/** The names of the samples' scores, in first-seen order. */
export function sampleScoreNames(samples: readonly EvalSample[]): string[] {
  const names: string[] = [];
  for (const sample of samples) for (const name of Object.keys(sample.scores)) if (!names.includes(name)) names.push(name);
  return names;
}

export type SortOrder = "none" | "ascending" | "descending";

/** The samples whose `score` reads as `only` ("" keeps all), sorted by it (unscored ones last),
 * ties by sample id and epoch. */
export function sampleRows(samples: readonly EvalSample[], score: string, order: SortOrder, only: string): EvalSample[] {
  const kept = only === "" ? [...samples] : samples.filter((s) => scoreText(s.scores[score]) === only);
  const byId = (a: EvalSample, b: EvalSample) => a.sample_id.localeCompare(b.sample_id, undefined, { numeric: true }) || a.epoch - b.epoch;
  if (order === "none") return kept.sort(byId);
  const sign = order === "ascending" ? 1 : -1;
  return kept.sort((a, b) => {
    const x = scoreNumber(a.scores[score]);
    const y = scoreNumber(b.scores[score]);
    if (x === null || y === null) return x === y ? byId(a, b) : x === null ? 1 : -1;
    return sign * (x - y) || byId(a, b);
  });
}

/** The distinct values of `score` among the samples, as text, for the filter. */
export function scoreValues(samples: readonly EvalSample[], score: string): string[] {
  const values = new Set(samples.filter((s) => s.scores[score] !== undefined && s.scores[score] !== null).map((s) => scoreText(s.scores[score])));
  return [...values].sort();
}

export interface ComparedMetric {
  key: string;
  score: string;
  metric: string;
  values: (Bar | null)[];  // one per eval, in the evals' order; null: that eval has no such metric
}

/** The metrics of several evals side by side (every metric any of them has). */
export function compareMetrics(evals: readonly Pick<EvalDetail, "scores">[]): ComparedMetric[] {
  const rows: ComparedMetric[] = [];
  evals.forEach((x, index) => {
    for (const bar of metricBars(x.scores)) {
      let row = rows.find((r) => r.key === bar.key);
      if (!row) {
        row = { key: bar.key, score: bar.score, metric: bar.metric, values: evals.map(() => null) };
        rows.push(row);
      }
      row.values[index] = bar;
    }
  });
  return rows;
}

export interface ComparedSample {
  key: string;  // "sample_id#epoch"
  sampleId: string;
  epoch: number;
  input: string;
  scores: (unknown | undefined)[];  // `score`'s value in each eval; undefined: not in that eval
  links: (string | null)[];
}

/** Each sample (and epoch) of any of the evals, with `score`'s value in each. */
export function compareSamples(evals: readonly Pick<EvalDetail, "samples">[], score: string): ComparedSample[] {
  const rows = new Map<string, ComparedSample>();
  evals.forEach((x, index) => {
    for (const sample of x.samples) {
      const key = `${sample.sample_id}#${sample.epoch}`;
      let row = rows.get(key);
      if (!row) {
        row = { key, sampleId: sample.sample_id, epoch: sample.epoch, input: sample.input,
                scores: evals.map(() => undefined), links: evals.map(() => null) };
        rows.set(key, row);
      }
      row.scores[index] = sample.scores[score];
      row.links[index] = sample.transcript_url;
    }
  });
  return [...rows.values()].sort((a, b) => a.sampleId.localeCompare(b.sampleId, undefined, { numeric: true }) || a.epoch - b.epoch);
}

/** `?ids=a,b` of the comparison page: the ids, each once, in order. */
export function comparedIds(query: string | null): string[] {
  return [...new Set((query ?? "").split(",").map((id) => id.trim()).filter(Boolean))];
}

/** The recording a sample of the platform's own task made (its metadata's `recording_id`), or "". */
export function recordingOf(sample: Pick<EvalSample, "metadata">): string {
  const id = sample.metadata?.recording_id;
  return typeof id === "string" ? id : "";
}
