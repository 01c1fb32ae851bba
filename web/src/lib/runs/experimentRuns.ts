// The experiment page's training runs (docs/training.md, "Distributed training"): the roles a
// run keeps in its summary (`roles/<role>/<field>`, written by platform_sdk.runs.rllib: env
// runners' count, healthy and nodes, learners' count and whether local, a replay buffer's size)
// as the rows of a small table, the headline metric the chart starts on, and how often the
// section reads the runs again (while the experiment is active, and a little after it ended for
// runs still marked running).

export type SummaryValue = boolean | number | string | null;

/** One role of a run: its count, how many are healthy, where it runs, and any other fields. */
export interface RoleRow {
  role: string;
  count: number | null;
  healthy: number | null;
  where: string;
  /** The role's other fields (e.g. a replay buffer's `size`), sorted by name. */
  other: [string, SummaryValue][];
}

const ROLE_KEY = /^roles\/([^/]+)\/(.+)$/;
const KNOWN = new Set(["count", "healthy", "nodes", "local"]);
/** The order roles are listed in; others follow by name. */
const ROLE_ORDER = ["env_runners", "learners", "replay"];

function numberOrNull(value: SummaryValue | undefined): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** Where a role runs: its nodes when given; else "local" (in the algorithm's process) or "remote"
 * by its `local` flag; else "–". */
function whereText(fields: ReadonlyMap<string, SummaryValue>): string {
  const nodes = fields.get("nodes");
  if (typeof nodes === "string" && nodes.trim()) return nodes.trim();
  const local = fields.get("local");
  if (local === true) return "local";
  if (local === false) return "remote";
  return "–";
}

/** The run's `roles/<role>/<field>` summary entries grouped by role (env runners, learners and
 * replay first, then the others by name); empty when it has none. */
export function rolesOf(summary: Readonly<Record<string, SummaryValue>> | null | undefined): RoleRow[] {
  const byRole = new Map<string, Map<string, SummaryValue>>();
  for (const [key, value] of Object.entries(summary ?? {})) {
    const match = ROLE_KEY.exec(key);
    if (!match) continue;
    const fields = byRole.get(match[1]) ?? new Map<string, SummaryValue>();
    fields.set(match[2], value);
    byRole.set(match[1], fields);
  }
  const rank = (role: string) => {
    const i = ROLE_ORDER.indexOf(role);
    return i < 0 ? ROLE_ORDER.length : i;
  };
  return [...byRole.keys()]
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
    .map((role) => {
      const fields = byRole.get(role)!;
      const other = [...fields.entries()].filter(([field]) => !KNOWN.has(field)).sort(([a], [b]) => a.localeCompare(b));
      return { role, count: numberOrNull(fields.get("count")), healthy: numberOrNull(fields.get("healthy")), where: whereText(fields), other };
    });
}

/** A role's name as the table shows it: "env_runners" is "env runners". */
export function roleLabel(role: string): string {
  return role.replace(/_/g, " ");
}

/** A summary value in a cell: "–" for none, numbers and booleans as they are. */
export function summaryText(value: SummaryValue | undefined): string {
  if (value === null || value === undefined || value === "") return "–";
  return String(value);
}

/** Whether some of the role's members are unhealthy (fewer healthy than counted). */
export function degraded(row: Pick<RoleRow, "count" | "healthy">): boolean {
  return row.count !== null && row.healthy !== null && row.healthy < row.count;
}

/** The metrics the chart looks for first: RLlib's mean episode return, then the runner's score. */
export const HEADLINE_METRICS = ["env_runners/episode_return_mean", "episode/score"] as const;

/** The metric the chart starts on: the first of HEADLINE_METRICS among `names`, else the first
 * name; "" when there are none. */
export function headlineMetric(names: readonly string[]): string {
  for (const name of HEADLINE_METRICS) if (names.includes(name)) return name;
  return names[0] ?? "";
}

/** How often the section reads the runs again while it should (ms). */
export const RUNS_REFRESH_MS = 5000;
/** How long after the experiment ended runs still marked running are read again (s): a command
 * that was killed never marks its run finished, and the page should not poll it forever. */
export const ENDED_GRACE_S = 60;

/** The refresh interval: RUNS_REFRESH_MS while the experiment is active (not loaded yet counts
 * as active), or while it ended less than ENDED_GRACE_S ago and some run is still running;
 * null (no more polling) once it has ended and its runs are finished. */
export function runsRefreshMs(
  experiment: { active: boolean; ended_at: number } | null,
  runs: readonly { state: string }[] | null,
  now: number,
): number | null {
  if (experiment === null || experiment.active) return RUNS_REFRESH_MS;
  const running = (runs ?? []).some((r) => r.state === "running");
  if (!running) return null;
  if (!experiment.ended_at || now - experiment.ended_at < ENDED_GRACE_S) return RUNS_REFRESH_MS;
  return null;
}

/** The key under which a run's series of `metric` is cached: it changes when the run logs a
 * later point of it, so the series is read again only then. */
export function seriesKey(run: { id: string; metrics: readonly { name: string; last_step: number }[] }, metric: string): string {
  const last = run.metrics.find((m) => m.name === metric)?.last_step ?? -1;
  return `${run.id}\n${metric}\n${last}`;
}
