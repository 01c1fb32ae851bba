// A random element of an action space, as the stream's step command takes it (what the Random
// agent plays). Not seeded: `random` defaults to Math.random; tests pass their own.
import { boundValues, isIntegerDtype, reshape, sizeOf, type SpaceJson } from "./spaces";

/** Half-width of the range drawn from where a Box bound is infinite. */
const UNBOUNDED_SPAN = 1;

export function sampleSpace(space: SpaceJson, random: () => number = Math.random): unknown {
  switch (space.type) {
    case "discrete": {
      const start = typeof space.start === "number" ? space.start : 0;
      return start + Math.floor(random() * (space.n ?? 1));
    }
    case "box": {
      const shape = space.shape ?? [];
      const size = sizeOf(shape);
      const low = boundValues(space.low, size, -Infinity);
      const high = boundValues(space.high, size, Infinity);
      const integer = isIntegerDtype(space.dtype);
      const values = low.map((lo, i) => drawBetween(lo, high[i], integer, random));
      return reshape(values, shape);
    }
    case "multi_discrete": {
      const nvec = space.nvec ?? [];
      const starts = Array.isArray(space.start) ? space.start : null;
      const draw = (n: unknown, index: number): unknown =>
        Array.isArray(n) ? n.map((m: unknown, j) => draw(m, j)) : (starts?.[index] ?? 0) + Math.floor(random() * Number(n));
      return (nvec as unknown[]).map((n, i) => draw(n, i));
    }
    case "multi_binary": {
      const shape = space.shape ?? [];
      return reshape(Array.from({ length: sizeOf(shape) }, () => (random() < 0.5 ? 0 : 1)), shape);
    }
    case "dict": {
      const spaces = (space.spaces ?? {}) as Record<string, SpaceJson>;
      return Object.fromEntries(Object.entries(spaces).map(([k, s]) => [k, sampleSpace(s, random)]));
    }
    case "tuple":
      return ((space.spaces ?? []) as SpaceJson[]).map((s) => sampleSpace(s, random));
    default:
      throw new Error(`cannot sample a space of type ${space.type}`);
  }
}

/** Uniform in [lo, hi] (integers: each of lo..hi equally); around the finite bound when the other is not. */
function drawBetween(lo: number, hi: number, integer: boolean, random: () => number): number {
  let a = lo;
  let b = hi;
  if (!Number.isFinite(a) && !Number.isFinite(b)) [a, b] = [-UNBOUNDED_SPAN, UNBOUNDED_SPAN];
  else if (!Number.isFinite(a)) a = b - 2 * UNBOUNDED_SPAN;
  else if (!Number.isFinite(b)) b = a + 2 * UNBOUNDED_SPAN;
  if (integer) return Math.min(b, Math.floor(a + random() * (b - a + 1)));
  return a + random() * (b - a);
}
