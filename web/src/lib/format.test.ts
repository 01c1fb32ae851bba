import { describe, expect, it } from "vitest";
import { formatNumber } from "./format";

describe("formatNumber", () => {
  it("keeps integers, rounds fractions, passes non-finite strings and marks missing values", () => {
    expect(formatNumber(21)).toBe("21");
    expect(formatNumber(0.12345)).toBe("0.123");
    expect(formatNumber("nan")).toBe("nan");
    expect(formatNumber(null)).toBe("–");
  });
});
