// How the replay's plots write numbers: axis ticks with as many decimals as the spacing between
// them needs (0.0001-spaced ticks are not "0, 0, 0"), values with a unit (seconds: compute_s)
// with an SI prefix (250 µs, 1.5 ms), large ones in k/M/G, tiny unitless ones as 2.5e-6; and a
// value at the cursor to 4 significant digits (one decimal beyond the whole part from 1,000 on:
// a return of -1234.6), unitless ones always as a number JavaScript and Python read back.

const PREFIXES: readonly (readonly [number, string])[] = [
  [1e9, "G"], [1e6, "M"], [1e3, "k"], [1, ""], [1e-3, "m"], [1e-6, "µ"], [1e-9, "n"],
];

/** Ticks and values of magnitude in [SMALL, LARGE) are written plainly (without a unit). */
const SMALL = 1e-4;
const LARGE = 1e5;
const SIGNIFICANT = 4;

/** The unit a plotted name implies: "s" for the seconds of `compute_s`, `wait_s`...; else null. */
export function unitOfName(name: string): string | null {
  return /(^|[_.])s$/.test(name) || /_s(\[|$)/.test(name) ? "s" : null;
}

function prefixFor(magnitude: number): readonly [number, string] {
  for (const entry of PREFIXES) if (magnitude >= entry[0] * 0.9995) return entry;
  return PREFIXES[PREFIXES.length - 1];
}

function withUnit(text: string, prefix: string, unit: string | null): string {
  const suffix = `${prefix}${unit ?? ""}`;
  return suffix === "" ? text : `${text} ${suffix}`;
}

function noNegativeZero(text: string): string {
  return /^-0(\.0*)?$/.test(text) ? text.slice(1) : text;
}

/** Decimals that tell ticks `spacing` apart (0 for whole spacings), at most 9. */
export function decimalsFor(spacing: number): number {
  if (!(spacing > 0) || !Number.isFinite(spacing)) return 0;
  let decimals = 0;
  while (decimals < 9 && Math.abs(Math.round(spacing * 10 ** decimals) - spacing * 10 ** decimals) > 1e-6 * 10 ** decimals * spacing) {
    decimals += 1;
  }
  return decimals;
}

function scaled(values: readonly number[], unit: string | null): readonly [number, string] {
  const magnitude = Math.max(...values.map((v) => (Number.isFinite(v) ? Math.abs(v) : 0)));
  if (magnitude === 0) return [1, ""];
  if (unit === null && magnitude >= SMALL && magnitude < LARGE) return [1, ""];
  return prefixFor(magnitude);
}

/** The axis labels of tick values `splits` (evenly spaced, as uPlot gives them). */
export function formatTicks(splits: readonly number[], unit: string | null = null): string[] {
  if (splits.length === 0) return [];
  const magnitude = Math.max(...splits.map((v) => (Number.isFinite(v) ? Math.abs(v) : 0)));
  if (unit === null && magnitude > 0 && magnitude < SMALL) {
    return splits.map((v) => (v === 0 ? "0" : v.toExponential(1)));
  }
  const [factor, prefix] = scaled(splits, unit);
  const spacing = splits.length > 1 ? Math.abs(splits[1] - splits[0]) / factor : Math.abs(splits[0]) / factor;
  const decimals = decimalsFor(spacing);
  return splits.map((v) => (v === 0 ? withUnit("0", "", unit) : withUnit(noNegativeZero((v / factor).toFixed(decimals)), prefix, unit)));
}

/** A value at the cursor: whole numbers as they are, others to 4 significant digits. */
export function formatValue(value: number | null | undefined, unit: string | null = null): string {
  if (value === null || value === undefined || Number.isNaN(value)) return "–";
  if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
  if (value === 0) return withUnit("0", "", unit);
  const magnitude = Math.abs(value);
  if (Number.isInteger(value) && magnitude < LARGE) return withUnit(String(value), "", unit);
  const [factor, prefix] = unit === null ? [1, ""] as const : prefixFor(magnitude);
  const inUnit = value / factor;
  // 4 significant digits, and one decimal beyond the whole part of values of 1,000 or more
  const digits = Math.max(SIGNIFICANT, Math.floor(Math.log10(Math.abs(inUnit))) + 2);
  const text = String(Number(inUnit.toPrecision(Math.min(digits, 21))));
  return withUnit(text, prefix, unit);
}
