// Episode arrays as the gateway sends them (`ArrayPublic`: nested lists, non-finite floats as
// "nan"/"inf"/"-inf", booleans as true/false) turned into plain numbers for plots and checks.
import type { Schemas } from "../../api/client";

export type EpisodeArray = Schemas["ArrayPublic"];

/** One JSON value of a numeric array as a number: "nan"/"inf"/"-inf" and booleans included. */
export function toNumber(value: unknown): number {
  if (typeof value === "number") return value;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "string") {
    const text = value.trim().toLowerCase();
    if (text === "nan") return Number.NaN;
    if (text === "inf" || text === "+inf" || text === "infinity") return Number.POSITIVE_INFINITY;
    if (text === "-inf" || text === "-infinity") return Number.NEGATIVE_INFINITY;
    const parsed = Number(text);
    return text !== "" && Number.isFinite(parsed) ? parsed : Number.NaN;
  }
  return Number.NaN;
}

function flatten(data: unknown, out: number[]): void {
  if (Array.isArray(data)) {
    for (const item of data) flatten(item, out);
  } else {
    out.push(toNumber(data));
  }
}

/** Every element of an array, row-major, as numbers. */
export function flatNumbers(array: EpisodeArray): number[] {
  const out: number[] = [];
  flatten(array.data, out);
  return out;
}

/** One named column of a per-step array. */
export interface Column {
  label: string;
  values: number[];
}

/**
 * The columns of an array of rows: shape (T,) gives one column named `name`, (T, k) gives k
 * columns `name[0]`..`name[k-1]`, (T, a, b) gives a*b columns `name[i,j]`, at most `limit`.
 */
export function columnsOf(name: string, array: EpisodeArray, limit = 16): Column[] {
  const shape = array.shape;
  if (shape.length === 0) return [];
  const rows = shape[0];
  const rest = shape.slice(1);
  const width = rest.reduce((a, b) => a * b, 1);
  const flat = flatNumbers(array);
  if (rest.length === 0) return [{ label: name, values: flat.slice(0, rows) }];
  const columns: Column[] = [];
  for (let c = 0; c < Math.min(width, limit); c++) {
    const values = new Array<number>(rows);
    for (let r = 0; r < rows; r++) values[r] = flat[r * width + c];
    columns.push({ label: `${name}[${elementIndex(c, rest).join(",")}]`, values });
  }
  return columns;
}

function elementIndex(flatIndex: number, shape: number[]): number[] {
  const index = new Array<number>(shape.length);
  let rest = flatIndex;
  for (let d = shape.length - 1; d >= 0; d--) {
    index[d] = rest % shape[d];
    rest = Math.floor(rest / shape[d]);
  }
  return index;
}
