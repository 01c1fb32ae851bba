// The Comparisons page's chart: every agent's reward per step averaged over the window
// (`reward_windows`, x = the window's first session step) as one line each, the world changes as
// vertical lines at their step, and each agent's recovery after a change shaded from the change
// to where it recovered, in the agent's colour.
import type { Comparison } from "./measures";
import { changeGroups, type ChangeGroup } from "../worldChanges/changeGroups";
import { timelineOf } from "./measures";

export const AGENT_COLORS = ["#2457d6", "#d66a24", "#1d7a3a", "#9b2fae", "#b3261e", "#0e8a8a", "#7a5c1d", "#5b6472"];

/** Agent `index`'s colour (the palette repeats past its length). */
export function agentColor(index: number): string {
  return AGENT_COLORS[index % AGENT_COLORS.length];
}

/** A `#rrggbb` colour with an alpha, as `rgba(r, g, b, alpha)`. */
export function translucent(color: string, alpha: number): string {
  const match = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(color);
  if (!match) return color;
  const [r, g, b] = match.slice(1).map((hex) => parseInt(hex, 16));
  return `rgba(${r}, ${g}, ${b}, ${alpha})`;
}

export interface ChartSeries {
  label: string;
  color: string;
  /** One value per x; null where the agent has no window starting there (or a non-finite mean). */
  values: (number | null)[];
}

export interface RecoveryBand {
  agent: number;
  color: string;
  from: number;
  to: number;
}

export interface ComparisonChart {
  /** Every window start step of any agent, ascending. */
  x: number[];
  series: ChartSeries[];
  changes: ChangeGroup[];
  bands: RecoveryBand[];
}

function finite(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** The chart of a comparison (see the module). */
export function comparisonChart(comparison: Pick<Comparison, "agents" | "world_changes" | "kwargs">): ComparisonChart {
  const byAgent = comparison.agents.map((agent) => {
    const means = new Map<number, number | null>();
    for (const window of agent.reward_windows ?? []) {
      const step = finite(window.step);
      if (step !== null) means.set(step, finite(window.mean));
    }
    return means;
  });
  const x = [...new Set(byAgent.flatMap((means) => [...means.keys()]))].sort((a, b) => a - b);
  const series = comparison.agents.map((agent, i) => ({
    label: agent.name,
    color: agentColor(i),
    values: x.map((step) => byAgent[i].get(step) ?? null),
  }));
  const bands: RecoveryBand[] = [];
  comparison.agents.forEach((agent, i) => {
    for (const recovery of agent.measures?.recovery ?? []) {
      const steps = finite(recovery.steps);
      if (recovery.too_close || !recovery.recovered || steps === null || steps <= 0) continue;
      bands.push({ agent: i, color: translucent(agentColor(i), 0.18), from: recovery.at, to: recovery.at + steps });
    }
  });
  return { x, series, changes: changeGroups(timelineOf(comparison)), bands };
}
