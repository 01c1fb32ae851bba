// What the live panel shows of an observation: how much to ask the stream for, and the
// labelled parts (`observation_labels`: {name: [start, stop]} over the flat observation).
import type { ObservationMode } from "../../api/stream";
import { elementCount, flatten, isImageSpace, type SpaceJson } from "./spaces";

/** Observations with more numbers than this are not sent to the page (their size would slow play). */
export const FULL_OBSERVATION_LIMIT = 512;

/** "full" for small observations, "none" for pictures and big ones. */
export function observationMode(space: SpaceJson | null): ObservationMode {
  if (!space || isImageSpace(space)) return "none";
  const count = elementCount(space);
  return count > 0 && count <= FULL_OBSERVATION_LIMIT ? "full" : "none";
}

export interface LabelledValue {
  name: string;
  values: number[];
}

/** The observation's parts by name, in the order of their start; null without labels. */
export function labelledObservation(
  observation: unknown,
  labels: Record<string, number[]> | null | undefined,
): LabelledValue[] | null {
  if (!labels || observation === null || observation === undefined) return null;
  const flat = flatten(observation);
  return Object.entries(labels)
    .filter(([, range]) => Array.isArray(range) && range.length === 2)
    .sort(([, a], [, b]) => a[0] - b[0])
    .map(([name, [start, stop]]) => ({ name, values: flat.slice(start, stop) }));
}
