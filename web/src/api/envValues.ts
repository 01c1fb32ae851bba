// The environment protocol's values (values.proto: Tensor, Value, Data) to and from the JSON the
// stream's text answers carry, so a binary answer reads like a text one: arrays as nested lists
// in C order, non-finite floats as the strings "inf", "-inf" and "nan" (as Python's str writes
// them), integers as numbers. The same rules as platform_contracts.values.json_from_datamap and
// platform_gateway.json_views.value_json on the gateway's side.
//
//   const action = valueFromJson([0.1, -0.3], { type: "box", dtype: "float32", shape: [2] });
//   const observation = jsonFromValue(response.observation);
import { create } from "@bufbuild/protobuf";
import {
  type Data, type DataMap, type Tensor, type Value, DictValueSchema, NamedValueSchema, TensorSchema, TupleValueSchema, ValueSchema,
} from "../gen/simulusion/env/v1/values_pb";
import { flatten, reshape, type SpaceJson } from "../lib/play/spaces";

/** A wire dtype (NumPy's `dtype.str` without its byte order, e.g. "f4") read as numbers. */
type Reader = (bytes: Uint8Array) => ArrayLike<number | bigint | boolean>;

const READERS: Record<string, Reader> = {
  f8: (b) => new Float64Array(aligned(b, 8)),
  f4: (b) => new Float32Array(aligned(b, 4)),
  i8: (b) => new BigInt64Array(aligned(b, 8)),
  u8: (b) => new BigUint64Array(aligned(b, 8)),
  i4: (b) => new Int32Array(aligned(b, 4)),
  u4: (b) => new Uint32Array(aligned(b, 4)),
  i2: (b) => new Int16Array(aligned(b, 2)),
  u2: (b) => new Uint16Array(aligned(b, 2)),
  i1: (b) => new Int8Array(aligned(b, 1)),
  u1: (b) => b,
  b1: (b) => Array.from(b, (x) => x !== 0),
};

/** NumPy's dtype names (as a space's JSON gives them) by their wire names. */
const WIRE_NAMES: Record<string, string> = {
  float64: "f8", float32: "f4", int64: "i8", uint64: "u8", int32: "i4", uint32: "u4", int16: "i2", uint16: "u2",
  int8: "i1", uint8: "u1", bool: "b1",
};

/** A tensor's dtype cannot be read here (e.g. float16): the caller falls back to the text commands. */
export class UnsupportedValueError extends Error {}

/** The bytes as a buffer of their own when their offset does not suit the typed array (protobuf
 * decodes `bytes` fields as views into the message). */
function aligned(bytes: Uint8Array, size: number): ArrayBuffer {
  if (bytes.byteOffset % size === 0 && bytes.byteLength % size === 0) {
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }
  return bytes.slice().buffer as ArrayBuffer;
}

/** One number of a tensor as JSON: non-finite floats as strings, 64-bit integers as numbers. */
function jsonNumber(x: number | bigint | boolean): number | string | boolean {
  if (typeof x === "bigint") return Number(x);
  if (typeof x === "number" && !Number.isFinite(x)) return Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
  return x;
}

/** A tensor as nested lists of its shape (a 0-d tensor as its one value). */
export function jsonFromTensor(tensor: Tensor): unknown {
  const read = READERS[tensor.dtype];
  if (!read) throw new UnsupportedValueError(`a tensor of dtype ${tensor.dtype} cannot be read in the browser`);
  const values = Array.from(read(tensor.data), jsonNumber) as number[];
  return reshape(values, tensor.shape.map(Number));
}

/** A Value as JSON: Discrete a number, Dict an object in the space's order, Tuple a list. */
export function jsonFromValue(value: Value | undefined): unknown {
  const kind = value?.kind;
  switch (kind?.case) {
    case "tensor":
      return jsonFromTensor(kind.value);
    case "discrete":
      return Number(kind.value);
    case "dict":
      return Object.fromEntries(kind.value.entries.map((entry) => [entry.name, jsonFromValue(entry.value)]));
    case "tuple":
      return kind.value.values.map(jsonFromValue);
    default:
      return null;
  }
}

/** Free-form data (info) as JSON. */
export function jsonFromData(data: Data): unknown {
  const kind = data.kind;
  switch (kind.case) {
    case "number":
      return jsonNumber(kind.value);
    case "integer":
      return Number(kind.value);
    case "flag":
    case "text":
      return kind.value;
    case "tensor":
      return jsonFromTensor(kind.value);
    case "map":
      return jsonFromDataMap(kind.value);
    case "list":
      return kind.value.items.map(jsonFromData);
    default:
      return null;
  }
}

export function jsonFromDataMap(map: DataMap | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, data] of Object.entries(map?.fields ?? {})) out[key] = jsonFromData(data);
  return out;
}

/** Whether `valueFromJson` can encode every action of `space` (Box of a known dtype, Discrete,
 * MultiBinary, and Dicts and Tuples of those). MultiDiscrete's dtype is not in its JSON. */
export function encodable(space: SpaceJson | null): boolean {
  if (!space) return false;
  switch (space.type) {
    case "box":
      return space.dtype !== undefined && WIRE_NAMES[space.dtype] !== undefined;
    case "discrete":
    case "multi_binary":
      return true;
    case "dict":
      return !Array.isArray(space.spaces) && Object.values(space.spaces ?? {}).every(encodable);
    case "tuple":
      return Array.isArray(space.spaces) && space.spaces.every(encodable);
    default:
      return false;
  }
}

function tensorOf(values: number[], wire: string, shape: readonly number[]): Tensor {
  const size = shape.reduce((a, b) => a * b, 1);
  if (values.length !== size) {
    throw new RangeError(`an action of ${values.length} numbers does not fit the shape [${shape.join(", ")}]`);
  }
  let array: ArrayBufferView;
  if (wire === "i8" || wire === "u8") {
    array = wire === "i8" ? BigInt64Array.from(values, (x) => BigInt(Math.trunc(x))) : BigUint64Array.from(values, (x) => BigInt(Math.trunc(x)));
  } else if (wire === "b1") {
    array = Uint8Array.from(values, (x) => (x ? 1 : 0));
  } else {
    const Typed = { f8: Float64Array, f4: Float32Array, i4: Int32Array, u4: Uint32Array, i2: Int16Array, u2: Uint16Array, i1: Int8Array, u1: Uint8Array }[wire];
    if (!Typed) throw new UnsupportedValueError(`an action of dtype ${wire} cannot be made in the browser`);
    array = Typed.from(values);
  }
  const data = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
  return create(TensorSchema, { dtype: wire, shape: shape.map(BigInt), data });
}

/** An action (as the page's controls make it) as a Value of `space`, as the gateway's
 * platform_contracts.json_values.value_from_json makes it for a text step. The env host checks
 * it against the space, as it does the SDK's. */
export function valueFromJson(action: unknown, space: SpaceJson): Value {
  switch (space.type) {
    case "discrete":
      return create(ValueSchema, { kind: { case: "discrete", value: BigInt(Math.trunc(Number(action))) } });
    case "box": {
      const wire = WIRE_NAMES[space.dtype ?? ""];
      if (!wire) throw new UnsupportedValueError(`a Box of dtype ${space.dtype} cannot be made in the browser`);
      return create(ValueSchema, { kind: { case: "tensor", value: tensorOf(flatten(action), wire, space.shape ?? []) } });
    }
    case "multi_binary":
      return create(ValueSchema, { kind: { case: "tensor", value: tensorOf(flatten(action), "i1", space.shape ?? []) } });
    case "dict": {
      const spaces = (space.spaces ?? {}) as Record<string, SpaceJson>;
      const given = (action ?? {}) as Record<string, unknown>;
      const entries = Object.entries(spaces).map(([name, sub]) => create(NamedValueSchema, { name, value: valueFromJson(given[name], sub) }));
      return create(ValueSchema, { kind: { case: "dict", value: create(DictValueSchema, { entries }) } });
    }
    case "tuple": {
      const spaces = (space.spaces ?? []) as SpaceJson[];
      const given = Array.isArray(action) ? action : [];
      const values = spaces.map((sub, i) => valueFromJson(given[i], sub));
      return create(ValueSchema, { kind: { case: "tuple", value: create(TupleValueSchema, { values }) } });
    }
    default:
      throw new UnsupportedValueError(`a ${space.type} action cannot be made in the browser`);
  }
}
