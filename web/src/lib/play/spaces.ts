// Spaces as the gateway describes them (`action_space` / `observation_space` of a session:
// platform_contracts.json_values.space_to_json): `type` and the kind's own fields. Box bounds
// are one number for all elements or the flat list; non-finite bounds come as strings.

export type Bound = number | string;

export interface SpaceJson {
  type: "box" | "discrete" | "multi_discrete" | "multi_binary" | "dict" | "tuple" | string;
  repr?: string;
  shape?: number[];
  dtype?: string;
  low?: Bound | Bound[];
  high?: Bound | Bound[];
  n?: number;
  start?: number | number[];
  nvec?: number[] | number[][];
  spaces?: Record<string, SpaceJson> | SpaceJson[];
}

/** A space from the session's JSON, or null when it is not one. */
export function asSpace(value: unknown): SpaceJson | null {
  if (typeof value !== "object" || value === null) return null;
  const type = (value as { type?: unknown }).type;
  return typeof type === "string" ? (value as SpaceJson) : null;
}

/** Elements in an array of `shape` (1 for a scalar). */
export function sizeOf(shape: readonly number[] | undefined): number {
  return (shape ?? []).reduce((a, b) => a * b, 1);
}

/** A JSON number or "inf"/"-inf"/"nan" as a number. */
export function toNumber(value: Bound): number {
  if (typeof value === "number") return value;
  if (value === "inf" || value === "Infinity") return Infinity;
  if (value === "-inf" || value === "-Infinity") return -Infinity;
  return Number(value);
}

/** A Box bound spread to one number per (flat) element. */
export function boundValues(bound: Bound | Bound[] | undefined, size: number, fallback: number): number[] {
  if (bound === undefined) return new Array<number>(size).fill(fallback);
  if (Array.isArray(bound)) return bound.map(toNumber);
  return new Array<number>(size).fill(toNumber(bound));
}

/** The flat `values` laid out as nested lists of `shape` (a scalar shape gives the value itself). */
export function reshape(values: readonly number[], shape: readonly number[]): unknown {
  if (shape.length === 0) return values[0];
  let offset = 0;
  const build = (depth: number): unknown => {
    const out: unknown[] = [];
    for (let i = 0; i < shape[depth]; i++) {
      if (depth === shape.length - 1) out.push(values[offset++]);
      else out.push(build(depth + 1));
    }
    return out;
  };
  return build(0);
}

/** Nested lists (or a number) flattened in C order. */
export function flatten(value: unknown): number[] {
  if (Array.isArray(value)) return value.flatMap(flatten);
  if (typeof value === "number") return [value];
  if (typeof value === "boolean") return [value ? 1 : 0];
  if (typeof value === "string") return [toNumber(value)];
  return [];
}

/** Whether a Box's dtype holds integers ("int64", "uint8", ...). */
export function isIntegerDtype(dtype: string | undefined): boolean {
  return dtype !== undefined && /^u?int\d*$/.test(dtype);
}

/** Whether an observation space is a picture (a Box of uint8 with 2 or 3 dimensions). */
export function isImageSpace(space: SpaceJson | null): boolean {
  return space?.type === "box" && space.dtype === "uint8" && (space.shape?.length ?? 0) >= 2;
}

/** How many numbers an element of the space has (leaves of Dict and Tuple summed). */
export function elementCount(space: SpaceJson | null): number {
  if (!space) return 0;
  switch (space.type) {
    case "discrete":
      return 1;
    case "box":
    case "multi_binary":
      return sizeOf(space.shape);
    case "multi_discrete":
      return flatten(space.nvec).length;
    case "dict":
    case "tuple":
      return Object.values(space.spaces ?? {}).reduce((n, s) => n + elementCount(s as SpaceJson), 0);
    default:
      return 0;
  }
}
