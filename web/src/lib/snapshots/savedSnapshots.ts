// The Saved snapshots page's pure helpers: sizes in bytes as people read them, and the order
// and environment choices of the listing.
import type { Schemas } from "../../api/client";

export type SavedSnapshot = Schemas["SavedSnapshotPublic"];

/** A size in bytes, in B, KiB, MiB or GiB with at most one decimal. */
export function sizeText(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const digits = unit === 0 || value >= 100 ? 0 : 1;
  return `${value.toFixed(digits)} ${units[unit]}`;
}

/** The environments of the listed snapshots, sorted, once each (the environment filter's choices). */
export function envChoices(snapshots: readonly Pick<SavedSnapshot, "env_id">[], picked: string): string[] {
  const ids = new Set(snapshots.map((s) => s.env_id));
  if (picked) ids.add(picked);
  return [...ids].sort();
}

/** When it was saved (unix seconds), as a local date and time. */
export function savedWhen(createdAt: number): string {
  return new Date(createdAt * 1000).toLocaleString();
}
