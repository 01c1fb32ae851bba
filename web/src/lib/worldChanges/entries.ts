// A world change as the platform writes it: a JSON object, a timeline entry
// ({"at": 5000, "change": "mass", "body": "hand", "scale": 2.0}) or an applied record (the entry
// plus where and when it applied). Read defensively: any field may be missing or odd.

export type WorldChangeEntry = Record<string, unknown>;

/** Whether `value` is an entry (a JSON object, not a list). */
export function isEntry(value: unknown): value is WorldChangeEntry {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `value` when it is a finite number, else null. */
export function finiteNumber(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}
