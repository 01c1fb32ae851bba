// Small formatting helpers shared by the pages.

/** A number as the platform's JSON sends it (non-finite values come as strings) for display. */
export function formatNumber(value: number | string | null | undefined, digits = 3): string {
  if (value === null || value === undefined) return "–";
  if (typeof value === "string") return value;
  if (Number.isInteger(value)) return String(value);
  return value.toFixed(digits);
}
