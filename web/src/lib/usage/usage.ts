// The Usage page's data (GET /v0/usage): the default range, the table's rows and totals, and the
// stacked bars of instance-hours per environment and day. Days are UTC calendar days
// (YYYY-MM-DD), as the platform counts them; `since` and `until` are both inclusive.
import type { UsageRow } from "../../api/managed";

const DAY_MS = 86_400_000;
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
/** A longer range charts only the days that have usage (one bar group per day otherwise). */
export const MAX_CHART_DAYS = 400;

function iso(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** Today's UTC date. */
export function utcToday(now: Date = new Date()): string {
  return iso(now);
}

/** This UTC month so far: its first day to today. */
export function thisMonth(now: Date = new Date()): { since: string; until: string } {
  return { since: `${iso(now).slice(0, 8)}01`, until: iso(now) };
}

/** `text` as a UTC midnight in ms, or null when it is not a real YYYY-MM-DD day. */
export function dayMs(text: string): number | null {
  const match = DAY.exec(text);
  if (!match) return null;
  const ms = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return iso(new Date(ms)) === text ? ms : null;
}

/** Why a range cannot be asked for, or null when it can. */
export function rangeProblem(since: string, until: string): string | null {
  const from = dayMs(since);
  const to = dayMs(until);
  if (from === null) return "choose the first day";
  if (to === null) return "choose the last day";
  if (to < from) return "the last day is before the first";
  return null;
}

/** Every day from `since` to `until`, both included ([] for a bad range or one over `max` days). */
export function daysBetween(since: string, until: string, max: number = MAX_CHART_DAYS): string[] {
  const from = dayMs(since);
  const to = dayMs(until);
  if (from === null || to === null || to < from || (to - from) / DAY_MS + 1 > max) return [];
  const days: string[] = [];
  for (let ms = from; ms <= to; ms += DAY_MS) days.push(iso(new Date(ms)));
  return days;
}

/** The table's rows: by day, then team, then environment. */
export function sortedRows(rows: readonly UsageRow[]): UsageRow[] {
  const key = (r: UsageRow) => [r.day, r.team, r.env_id];
  return [...rows].sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
    return 0;
  });
}

export interface UsageTotals {
  instanceHours: number;
  /** Session-days: a session that ran on two days counts on both. */
  sessionDays: number;
  /** Instance-hours per environment, most first. */
  byEnv: { envId: string; instanceHours: number }[];
}

export function usageTotals(rows: readonly UsageRow[]): UsageTotals {
  const byEnv = new Map<string, number>();
  let instanceHours = 0;
  let sessionDays = 0;
  for (const row of rows) {
    instanceHours += row.instance_hours;
    sessionDays += row.sessions;
    byEnv.set(row.env_id, (byEnv.get(row.env_id) ?? 0) + row.instance_hours);
  }
  return {
    instanceHours, sessionDays,
    byEnv: [...byEnv].map(([envId, hours]) => ({ envId, instanceHours: hours }))
      .sort((a, b) => b.instanceHours - a.instanceHours || (a.envId < b.envId ? -1 : 1)),
  };
}

export interface UsageChartData {
  /** The x axis: every day of the range (only the days with usage past MAX_CHART_DAYS). */
  days: string[];
  /** Environments bottom to top: the most instance-hours at the bottom. */
  envs: string[];
  /** hours[e][d]: environment e's instance-hours on day d (all teams added). */
  hours: number[][];
  /** tops[e][d]: where e's bar ends on day d, i.e. the sum of envs 0..e (the stack's heights). */
  tops: number[][];
}

/** The stacked bars of `rows` over `since`..`until`. */
export function usageChart(rows: readonly UsageRow[], since: string, until: string): UsageChartData {
  let days = daysBetween(since, until);
  if (days.length === 0) days = [...new Set(rows.map((r) => r.day))].sort();
  const dayIndex = new Map(days.map((d, i) => [d, i]));
  const envs = usageTotals(rows.filter((r) => dayIndex.has(r.day))).byEnv.map((e) => e.envId);
  const envIndex = new Map(envs.map((e, i) => [e, i]));
  const hours = envs.map(() => days.map(() => 0));
  for (const row of rows) {
    const d = dayIndex.get(row.day);
    const e = envIndex.get(row.env_id);
    if (d !== undefined && e !== undefined) hours[e][d] += row.instance_hours;
  }
  const tops: number[][] = [];
  hours.forEach((values, e) => tops.push(values.map((v, d) => v + (e > 0 ? tops[e - 1][d] : 0))));
  return { days, envs, hours, tops };
}

/** Instance-hours for people: whole numbers as they are, small ones with their first digits. */
export function formatHours(hours: number): string {
  if (!Number.isFinite(hours)) return String(hours);
  if (hours === 0) return "0";
  const size = Math.abs(hours);
  if (size < 0.0001) return hours > 0 ? "< 0.0001" : "> -0.0001";
  if (size < 0.01) return hours.toFixed(4);
  if (size < 100) return hours.toFixed(2);
  return hours.toFixed(1);
}
