// A comparison over several seeds (`compare --seeds N`): each measure's mean over an agent's
// runs with its spread, given as the range (min–max) of the runs, which reads plainly with a
// few seeds; and, per seed, each agent's replay of that seed's run.
import type { Schemas } from "../../api/client";
import type { ComparisonAgent } from "./measures";
import { replayPath } from "./measures";

type Run = Schemas["ComparisonRunPublic"];
type Measure = number | string | null | undefined;

export interface Spread {
  mean: number;
  min: number;
  max: number;
  /** Runs that measured it (a run may not: no success reported, a change too close). */
  n: number;
}

export interface SpreadRow {
  /** "Success", "Compute (ms per decision)", "Recovery at 2200 (steps)", "Retention at 4200". */
  label: string;
  spread: Spread | null;
  /** "0.412 (0.300–0.500)"; "–" when no run measured it. */
  text: string;
}

/** The mean and range of the finite numbers among `values`; null when there is none. */
export function spreadOf(values: readonly Measure[]): Spread | null {
  const numbers = values.filter((v): v is number => typeof v === "number" && Number.isFinite(v));
  if (numbers.length === 0) return null;
  const mean = numbers.reduce((a, b) => a + b, 0) / numbers.length;
  return { mean, min: Math.min(...numbers), max: Math.max(...numbers), n: numbers.length };
}

/** "mean (min–max)" with `digits` decimals, "–" for none. */
export function spreadText(spread: Spread | null, digits = 3): string {
  if (spread === null) return "–";
  const f = (v: number) => v.toFixed(digits);
  return spread.min === spread.max ? f(spread.mean) : `${f(spread.mean)} (${f(spread.min)}–${f(spread.max)})`;
}

function row(label: string, values: Measure[], digits: number): SpreadRow {
  const spread = spreadOf(values);
  return { label, spread, text: spreadText(spread, digits) };
}

/** An agent's measures over its runs, one row per measure: success, compute, then a recovery row
 * per change and a retention row per return, at the steps the first run names. */
export function spreadRows(runs: readonly Run[]): SpreadRow[] {
  const first = runs[0]?.measures;
  if (!first) return [];
  const rows = [
    row("Success", runs.map((r) => r.measures?.success), 3),
    row("Compute (ms per decision)", runs.map((r) => {
      const s = r.measures?.compute_s;
      return typeof s === "number" ? s * 1000 : s;
    }), 3),
  ];
  for (const change of first.recovery ?? []) {
    rows.push(row(`Recovery at ${change.at} (steps)`, runs.map((r) =>
      (r.measures?.recovery ?? []).find((c) => c.at === change.at)?.steps), 1));
  }
  for (const back of first.retention ?? []) {
    rows.push(row(`Retention at ${back.at}`, runs.map((r) =>
      (r.measures?.retention ?? []).find((c) => c.at === back.at)?.retention), 3));
  }
  return rows;
}

export interface SeedReplays {
  seed: number;
  /** Each agent's replay of its run from this seed's snapshot (null: not recorded). */
  replays: { name: string; path: string | null }[];
}

/** Per seed, the agents' replays of the same moment: their runs from that seed's snapshot. */
export function seedReplays(agents: readonly ComparisonAgent[], seeds: readonly number[]): SeedReplays[] {
  return seeds.map((seed) => ({
    seed,
    replays: agents.map((agent) => {
      const run = (agent.runs ?? []).find((r) => r.seed === seed);
      return { name: agent.name, path: run?.recording_id ? replayPath(run.recording_id) : null };
    }),
  }));
}
