// Which recorded frame to show at a cursor step. An unthinned recording keeps one frame per
// observation row (frame row = row of the step). A thinned life (meta.json `frame_every` > 1
// or `max_frames` > 0) keeps only some: its `frame_steps` array gives each kept frame's life
// step, and the step s of an episode is life step `life_start + s`; the replay shows the kept
// frame nearest to the cursor. A row whose frame the server does not have (a restore's row 0:
// a restore records no frame) is `missing`: the nearest row that is not takes its place.
import { type EpisodeSteps, rowOfStep } from "./steps";

export type FrameSource =
  | { kind: "none" }
  | { kind: "rows"; count: number; steps: EpisodeSteps }
  | { kind: "thinned"; lifeSteps: readonly number[]; lifeStart: number };

/** A frame to show: its row in the episode's `frames` and the step it was taken at. */
export interface FrameChoice {
  row: number;
  step: number;
  /** Whether it is the cursor step's own frame (false: the nearest one kept). */
  exact: boolean;
}

export function frameCount(source: FrameSource): number {
  if (source.kind === "none") return 0;
  if (source.kind === "rows") return source.count;
  return source.lifeSteps.length;
}

/** The frame for the cursor at `step` among the rows not `missing`, or null when there is none. */
export function frameForStep(source: FrameSource, step: number, missing: ReadonlySet<number> = NONE_MISSING): FrameChoice | null {
  const own = ownFrame(source, step);
  if (own === null || !missing.has(own.row)) return own;
  const row = nearestPresentRow(own.row, frameCount(source), missing);
  if (row === null) return null;
  return { row, step: stepOfFrame(source, row) ?? own.step, exact: false };
}

/** Whether the cursor step's own frame is one the server does not have. */
export function ownFrameMissing(source: FrameSource, step: number, missing: ReadonlySet<number>): boolean {
  const own = ownFrame(source, step);
  return own !== null && own.exact && missing.has(own.row);
}

const NONE_MISSING: ReadonlySet<number> = new Set();

/** The row nearest to `row` (the later one on a tie) that is not missing, or null when all are. */
export function nearestPresentRow(row: number, count: number, missing: ReadonlySet<number>): number | null {
  for (let distance = 1; distance < count; distance++) {
    if (row + distance < count && !missing.has(row + distance)) return row + distance;
    if (row - distance >= 0 && !missing.has(row - distance)) return row - distance;
  }
  return null;
}

function ownFrame(source: FrameSource, step: number): FrameChoice | null {
  if (source.kind === "none") return null;
  if (source.kind === "rows") {
    if (source.count === 0) return null;
    const wanted = rowOfStep(source.steps, step);
    const row = Math.min(source.count - 1, Math.max(0, wanted));
    const rowStep = source.steps.resetRow ? row : row + 1;
    return { row, step: rowStep, exact: row === wanted };
  }
  const steps = source.lifeSteps;
  if (steps.length === 0) return null;
  const target = source.lifeStart + step;
  const row = nearestIndex(steps, target);
  return { row, step: steps[row] - source.lifeStart, exact: steps[row] === target };
}

/** The step a frame row was taken at. */
export function stepOfFrame(source: FrameSource, row: number): number | null {
  if (source.kind === "none" || row < 0 || row >= frameCount(source)) return null;
  if (source.kind === "rows") return source.steps.resetRow ? row : row + 1;
  return source.lifeSteps[row] - source.lifeStart;
}

/** Index of the value of the increasing `values` nearest to `target` (the earlier one on a tie). */
export function nearestIndex(values: readonly number[], target: number): number {
  let low = 0;
  let high = values.length - 1;
  if (target <= values[low]) return low;
  if (target >= values[high]) return high;
  while (high - low > 1) {
    const middle = (low + high) >> 1;
    if (values[middle] <= target) low = middle;
    else high = middle;
  }
  return target - values[low] <= values[high] - target ? low : high;
}
