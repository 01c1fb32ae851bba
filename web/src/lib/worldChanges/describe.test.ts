import { describe, expect, it } from "vitest";
import { describeChange } from "./describe";

describe("describeChange", () => {
  it("the kind and its fields, without where and when it applied", () => {
    expect(describeChange({ at: 5, change: "mass", body: "hand", scale: 2.0 })).toBe('mass (body="hand", scale=2)');
    expect(describeChange({ at: 5, change: "sensor_noise", std: 0.01, indices: [0, 1], index: 1, session_step: 5, seq: 9, time: 1.5 }))
      .toBe("sensor_noise (std=0.01, indices=[0,1])");
    expect(describeChange({ at: 0, change: "friction", reveal: true })).toBe("friction (reveal=true)");
    expect(describeChange({})).toBe("change");
  });
});
