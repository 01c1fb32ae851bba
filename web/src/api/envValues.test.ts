import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { DataListSchema, DataMapSchema, DataSchema, TensorSchema } from "../gen/simulusion/env/v1/values_pb";
import { encodable, jsonFromData, jsonFromTensor, jsonFromValue, UnsupportedValueError, valueFromJson } from "./envValues";

function bytesOf(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

describe("envValues", () => {
  it("reads tensors of every common dtype as nested lists, non-finite floats as strings", () => {
    const f4 = create(TensorSchema, { dtype: "f4", shape: [2n, 2n], data: bytesOf(new Float32Array([1, -2, NaN, -Infinity])) });
    expect(jsonFromTensor(f4)).toEqual([[1, -2], ["nan", "-inf"]]);
    const i8 = create(TensorSchema, { dtype: "i8", shape: [2n], data: bytesOf(new BigInt64Array([3n, -4n])) });
    expect(jsonFromTensor(i8)).toEqual([3, -4]);
    const u1 = create(TensorSchema, { dtype: "u1", shape: [], data: new Uint8Array([200]) });
    expect(jsonFromTensor(u1)).toBe(200);
    const b1 = create(TensorSchema, { dtype: "b1", shape: [2n], data: new Uint8Array([1, 0]) });
    expect(jsonFromTensor(b1)).toEqual([true, false]);
  });

  it("reads a tensor whose bytes sit at an odd offset of their message", () => {
    const backing = new Uint8Array(17);
    backing.set(bytesOf(new Float64Array([0.5, 2.5])), 1);
    const tensor = create(TensorSchema, { dtype: "f8", shape: [2n], data: backing.subarray(1) });
    expect(jsonFromTensor(tensor)).toEqual([0.5, 2.5]);
  });

  it("refuses a dtype it cannot read with an UnsupportedValueError", () => {
    const f2 = create(TensorSchema, { dtype: "f2", shape: [1n], data: new Uint8Array(2) });
    expect(() => jsonFromTensor(f2)).toThrow(UnsupportedValueError);
  });

  it("makes actions of Box, Discrete, MultiBinary, Dict and Tuple spaces and reads them back", () => {
    const box = { type: "box", dtype: "float64", shape: [3] };
    expect(jsonFromValue(valueFromJson([0.1, "inf", -3], box))).toEqual([0.1, "inf", -3]);
    expect(jsonFromValue(valueFromJson(4, { type: "discrete", n: 5 }))).toBe(4);
    expect(jsonFromValue(valueFromJson([1, 0], { type: "multi_binary", shape: [2] }))).toEqual([1, 0]);
    const dict = { type: "dict", spaces: { arm: box, grip: { type: "discrete", n: 2 } } };
    expect(jsonFromValue(valueFromJson({ grip: 1, arm: [1, 2, 3] }, dict))).toEqual({ arm: [1, 2, 3], grip: 1 });
    const tuple = { type: "tuple", spaces: [{ type: "discrete", n: 3 }, { type: "box", dtype: "int64", shape: [] }] };
    expect(jsonFromValue(valueFromJson([2, 7], tuple))).toEqual([2, 7]);
    expect(() => valueFromJson([1, 2], box)).toThrow(/does not fit the shape \[3\]/);
  });

  it("says which action spaces it can encode", () => {
    expect(encodable({ type: "box", dtype: "float32", shape: [2] })).toBe(true);
    expect(encodable({ type: "box", dtype: "float16", shape: [2] })).toBe(false);
    expect(encodable({ type: "multi_discrete", nvec: [2, 2] })).toBe(false);
    expect(encodable({ type: "dict", spaces: { a: { type: "discrete", n: 2 } } })).toBe(true);
    expect(encodable(null)).toBe(false);
  });

  it("reads info data: numbers, integers, text, lists, maps and null", () => {
    const map = create(DataMapSchema, {
      fields: {
        n: create(DataSchema, { kind: { case: "number", value: Infinity } }),
        list: create(DataSchema, {
          kind: { case: "list", value: create(DataListSchema, { items: [create(DataSchema, { kind: { case: "text", value: "a" } }), create(DataSchema, { kind: { case: "null", value: true } })] }) },
        }),
      },
    });
    expect(jsonFromData(create(DataSchema, { kind: { case: "map", value: map } }))).toEqual({ n: "inf", list: ["a", null] });
  });
});
