import { describe, expect, it } from "vitest";
import { decimalsFor, formatTicks, formatValue, unitOfName } from "./numberFormat";

describe("axis ticks", () => {
  it("gives small seconds an SI prefix instead of reading 0, 0, 0", () => {
    expect(formatTicks([0, 0.0005, 0.001, 0.0015], "s")).toEqual(["0 s", "0.5 ms", "1.0 ms", "1.5 ms"]);
    expect(formatTicks([0.00002, 0.00004], "s")).toEqual(["20 µs", "40 µs"]);
  });

  it("writes plain numbers with the decimals their spacing needs", () => {
    expect(formatTicks([-2, -1, 0, 1])).toEqual(["-2", "-1", "0", "1"]);
    expect(formatTicks([0.1, 0.2, 0.3])).toEqual(["0.1", "0.2", "0.3"]);
    expect(formatTicks([-0.25, 0, 0.25])).toEqual(["-0.25", "0", "0.25"]);
    expect(formatTicks([0.001, 0.002, 0.003])).toEqual(["0.001", "0.002", "0.003"]);
    expect(formatTicks([0, 0.00002, 0.00004])).toEqual(["0", "2.0e-5", "4.0e-5"]);
    expect(formatTicks([200_000, 400_000])).toEqual(["200 k", "400 k"]);
  });

  it("counts the decimals a spacing needs", () => {
    expect(decimalsFor(5)).toBe(0);
    expect(decimalsFor(0.5)).toBe(1);
    expect(decimalsFor(0.25)).toBe(2);
    expect(decimalsFor(0.0001)).toBe(4);
  });
});

describe("values at the cursor", () => {
  it("keeps whole numbers and rounds the rest to 4 significant digits", () => {
    expect(formatValue(3)).toBe("3");
    expect(formatValue(-7.123456789)).toBe("-7.123");
    expect(formatValue(0.0123456)).toBe("0.01235");
    expect(formatValue(-1234.5678)).toBe("-1234.6");
    expect(formatValue(0.00012346)).toBe("0.0001235");
    expect(formatValue(123456789.123)).toBe("123456789.1");
    expect(formatValue(0.00012345, "s")).toBe("123.5 µs");
    expect(formatValue(1.5, "s")).toBe("1.5 s");
    expect(formatValue(null)).toBe("–");
    expect(formatValue(Number.POSITIVE_INFINITY)).toBe("inf");
  });

  it("knows seconds by their name", () => {
    expect(unitOfName("compute_s")).toBe("s");
    expect(unitOfName("agent.compute_s")).toBe("s");
    expect(unitOfName("reward")).toBeNull();
    expect(unitOfName("settle_steps")).toBeNull();
  });
});
