import { describe, expect, it } from "vitest";
import { controlRate, RateMeter, StepPacer } from "./pacer";

describe("controlRate", () => {
  it("takes metadata.control_rate, else 30", () => {
    expect(controlRate({ control_rate: 15 })).toBe(15);
    expect(controlRate({})).toBe(30);
    expect(controlRate({ control_rate: 0 })).toBe(30);
    expect(controlRate(undefined)).toBe(30);
  });
});

describe("StepPacer", () => {
  it("steps one period apart while answers are quick", () => {
    const pacer = new StepPacer(50); // 20 ms
    expect(pacer.delay(0)).toBe(0);
    pacer.sent(0);
    expect(pacer.delay(5)).toBeNull(); // one in flight
    pacer.answered();
    expect(pacer.delay(5)).toBe(15);
    expect(pacer.delay(20)).toBe(0);
  });
  it("keeps to its schedule after an answer less than a period late", () => {
    const pacer = new StepPacer(50); // 20 ms
    pacer.sent(0);
    pacer.answered(); // the answer came at 30 ms: the step due at 20 went 10 ms late
    expect(pacer.delay(30)).toBe(0);
    pacer.sent(30);
    pacer.answered();
    expect(pacer.delay(31)).toBe(9); // due at 40, not 50: the late step cost nothing on average
  });
  it("never bursts to catch up after an answer more than a period late (no backlog)", () => {
    const pacer = new StepPacer(50);
    pacer.sent(0);
    pacer.answered(); // the answer took long: it is now 100 ms, four periods late
    expect(pacer.delay(100)).toBe(0);
    pacer.sent(100);
    pacer.answered();
    expect(pacer.delay(101)).toBe(19); // a whole period after the late step, not at once
  });
  it("holds the rate when every answer comes half a period late", () => {
    const pacer = new StepPacer(50);
    let now = 0;
    let sent = 0;
    while (now < 1000) {
      const wait = pacer.delay(now);
      if (wait === null || wait > 0) {
        now += wait ?? 1;
        continue;
      }
      pacer.sent(now);
      sent++;
      now += sent % 2 === 0 ? 30 : 5; // every other answer takes 1.5 periods
      pacer.answered();
    }
    expect(sent).toBeGreaterThanOrEqual(49);
    expect(sent).toBeLessThanOrEqual(51);
  });
  it("counts steps sent over time at the rate", () => {
    const pacer = new StepPacer(30);
    let sent = 0;
    for (let now = 0; now < 1000; now += 1) {
      if (pacer.delay(now) === 0) {
        pacer.sent(now);
        sent++;
        pacer.answered();
      }
    }
    expect(sent).toBeGreaterThanOrEqual(29);
    expect(sent).toBeLessThanOrEqual(31);
  });
});

describe("RateMeter", () => {
  it("counts ticks in the last second", () => {
    const meter = new RateMeter(1000);
    for (let t = 0; t < 1000; t += 100) meter.tick(t);
    expect(meter.rate(999)).toBe(10);
    expect(meter.rate(1550)).toBe(4);
  });
});
