// What the Replay page shows of one frame beside its reward: the true values of the labelled
// observation parts (`state.<name>`, (T+1, k) rows like the observations: what the environment
// really was while a sensor world change showed the agent something else), and for the action
// that follows the frame, the one taken (`actions`) and the teacher's suggestion
// (`teacher.action` where `teacher.valid`; row t answers the same observation as actions[t]).
// Also the plot of where the action taken was the teacher's suggestion.
import { actionArrayNames, actionRow } from "./actions";
import { flatNumbers, type EpisodeArray } from "./arrays";
import type { PlotSpec } from "./plotData";
import { rowOfStep, type EpisodeSteps } from "./steps";

export const STATE_PREFIX = "state.";
export const TEACHER_ACTION = "teacher.action";
export const TEACHER_VALID = "teacher.valid";

type Arrays = Readonly<Record<string, EpisodeArray>>;

/** The arrays the frame details need, among an episode's `array_names`. */
export function detailArrayNames(arrayNames: readonly string[]): string[] {
  const state = arrayNames.filter((n) => n.startsWith(STATE_PREFIX)).sort();
  const teacher = arrayNames.includes(TEACHER_VALID)
    ? [TEACHER_VALID, ...arrayNames.filter((n) => n === TEACHER_ACTION || n.startsWith(`${TEACHER_ACTION}.`)), ...actionArrayNames(arrayNames)]
    : [];
  return [...state, ...teacher];
}

export interface StateValue {
  name: string;
  values: number[];
}

export interface NextAction {
  /** The step the action was taken at (the cursor's step + 1). */
  step: number;
  taken: unknown;
  /** The teacher's suggestion for it; null where the recording has none (teacher.valid false). */
  suggested: unknown;
}

export interface StepDetails {
  state: StateValue[];
  /** The action after the frame; null at the episode's last step or without a teacher. */
  next: NextAction | null;
  /** Whether the recording has the teacher's suggestions. */
  hasTeacher: boolean;
}

function rowValues(array: EpisodeArray, row: number): number[] | null {
  const data = array.data;
  if (!Array.isArray(data) || row < 0 || row >= data.length) return null;
  return flatNumbers({ ...array, data: data[row] });
}

function validAt(arrays: Arrays, row: number): boolean {
  const valid = arrays[TEACHER_VALID];
  return valid !== undefined && rowValues(valid, row)?.[0] === 1;
}

/** The frame's details at cursor `step`. */
export function stepDetails(arrays: Arrays, steps: EpisodeSteps, step: number, actionSpace: unknown): StepDetails {
  const row = rowOfStep(steps, step);
  const state = Object.keys(arrays)
    .filter((n) => n.startsWith(STATE_PREFIX))
    .sort()
    .flatMap((name) => {
      const values = rowValues(arrays[name], row);
      return values ? [{ name: name.slice(STATE_PREFIX.length), values }] : [];
    });
  const hasTeacher = arrays[TEACHER_VALID] !== undefined;
  let next: NextAction | null = null;
  if (hasTeacher && step >= 0 && step < steps.length) {
    next = {
      step: step + 1,
      taken: actionRow(arrays, actionSpace, step),
      suggested: validAt(arrays, step) ? actionRow(arrays, actionSpace, step, TEACHER_ACTION) : null,
    };
  }
  return { state, next, hasTeacher };
}

/**
 * The plot of the steps whose action was the teacher's suggestion: 1 where it was, 0 where it
 * was not, a gap where there was no suggestion; null without the teacher's arrays.
 */
export function teacherPlot(arrays: Arrays, steps: EpisodeSteps, actionSpace: unknown): PlotSpec | null {
  if (arrays[TEACHER_VALID] === undefined || actionArrayNames(Object.keys(arrays)).length === 0) return null;
  const values = new Array<number | null>(steps.length);
  for (let t = 0; t < steps.length; t++) {
    values[t] = validAt(arrays, t)
      ? JSON.stringify(actionRow(arrays, actionSpace, t)) === JSON.stringify(actionRow(arrays, actionSpace, t, TEACHER_ACTION)) ? 1 : 0
      : null;
  }
  return { id: "teacher", title: "action = the teacher's suggestion", stepped: true, series: [{ label: "as suggested", values }] };
}
