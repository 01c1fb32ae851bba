// A timeline's world changes grouped by the step they are due at, each group in words: the
// Comparisons page's chart marks and lists one line per step.
import { describeChange } from "./describe";
import { finiteNumber, isEntry } from "./entries";

export interface ChangeGroup {
  at: number;
  /** Its entries in words, e.g. `mass (body="hand", scale=2)`, joined by "; ". */
  label: string;
}

/** The timeline's world changes grouped by their step, in step order (entries without a finite
 * `at` are left out). */
export function changeGroups(worldChanges: unknown): ChangeGroup[] {
  const groups = new Map<number, string[]>();
  const entries = Array.isArray(worldChanges) ? worldChanges.filter(isEntry) : [];
  for (const entry of entries) {
    const at = finiteNumber(entry.at);
    if (at === null) continue;
    const labels = groups.get(at) ?? [];
    labels.push(describeChange(entry));
    groups.set(at, labels);
  }
  return [...groups.entries()].sort(([a], [b]) => a - b).map(([at, labels]) => ({ at, label: labels.join("; ") }));
}
