import { describe, expect, it } from "vitest";
import { Throttle } from "./throttle";

describe("Throttle", () => {
  it("the first refresh at once, the next no sooner than the interval after it", () => {
    const throttle = new Throttle(1000);
    expect(throttle.request(0)).toBe(0);
    throttle.started(0);
    expect(throttle.request(200)).toBe(800);
  });

  it("asks made while one is scheduled are folded into it", () => {
    const throttle = new Throttle(1000);
    throttle.request(0);
    throttle.started(0);
    expect(throttle.request(100)).toBe(900);
    expect(throttle.request(300)).toBeNull();
    expect(throttle.request(900)).toBeNull();
    throttle.started(1000);
    expect(throttle.request(2500)).toBe(0); // long after the last one
  });
});
