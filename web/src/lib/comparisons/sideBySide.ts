// The side-by-side replay of a comparison: for one seed, each agent's recording of its run from
// that seed's snapshot (a lane each, in the agents' order and colours), and the range of the
// shared cursor in session steps: from the agents' first step to the last step of the longest run.
import { agentColor } from "./chart";
import type { Comparison } from "./measures";
import { firstStepOf } from "./runTimeline";

export interface Lane {
  name: string;
  color: string;
  /** The recording of its run from the seed's snapshot; null when that run was not recorded. */
  recordingId: string | null;
  /** The actions the run took, as the comparison says (null: not said). */
  steps: number | null;
}

export interface CursorRange {
  first: number;
  last: number;
}

function recording(id: unknown): string | null {
  return typeof id === "string" && id ? id : null;
}

/** The seeds to choose from: the comparison's `seeds` when its agents kept a run per seed, else
 * its one seed (null when it names none). */
export function overlaySeeds(comparison: Pick<Comparison, "seeds" | "seed" | "agents">): (number | null)[] {
  const seeds = comparison.seeds ?? [];
  const perSeed = comparison.agents.some((a) => (a.runs ?? []).length > 0);
  if (perSeed && seeds.length > 0) return [...seeds];
  return [comparison.seed ?? null];
}

/** Each agent's lane for `seed`: its run from that seed (the top-level run when it kept no runs). */
export function lanesFor(comparison: Pick<Comparison, "agents">, seed: number | null): Lane[] {
  return comparison.agents.map((agent, i) => {
    const runs = agent.runs ?? [];
    const run = runs.length > 0 ? runs.find((r) => r.seed === seed) ?? null : agent;
    return {
      name: agent.name,
      color: agentColor(i),
      recordingId: recording(run?.recording_id),
      steps: typeof run?.steps === "number" ? run.steps : null,
    };
  });
}

/** The shared cursor's session steps: the agents' first step to the longest run's last, counting
 * both what the comparison says and what the recordings hold (`recorded`, actions per lane). */
export function cursorRange(
  comparison: Pick<Comparison, "first_step" | "warmup">, lanes: readonly Lane[], recorded: readonly number[],
): CursorRange {
  const first = firstStepOf(comparison);
  const longest = Math.max(1, ...lanes.map((l) => l.steps ?? 0), ...recorded);
  return { first, last: first + longest - 1 };
}

/** `step` moved into the range (NaN gives its first). */
export function clampCursor(range: CursorRange, step: number): number {
  if (!Number.isFinite(step)) return range.first;
  return Math.min(range.last, Math.max(range.first, Math.round(step)));
}
