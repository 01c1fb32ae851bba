import { describe, expect, it } from "vitest";
import { formatMs, type TraceSpan, traceGroup, waterfall } from "./waterfall";

function span(trace_id: string, span_id: string, parent: string | null, name: string, start: number, duration_ms: number): TraceSpan {
  return { trace_id, span_id, parent_span_id: parent, name, service: "svc", start, duration_ms, kind: "internal", error: false, attributes: {} };
}

describe("waterfall", () => {
  const step = [
    span("t1", "c", "a", "recorder.write", 100.004, 2),
    span("t1", "b", "a", "env.step", 100.001, 1),
    span("t1", "a", "sdk-span", "envhost.step", 100.0, 3), // its parent (the client's) is not here: a root
  ];

  it("orders a trace's spans depth-first from its root, children by start", () => {
    const group = traceGroup("t1", step);
    expect(group.rows.map((r) => [r.span.name, r.depth])).toEqual([["envhost.step", 0], ["env.step", 1], ["recorder.write", 1]]);
    expect(group.title).toBe("envhost.step");
    expect(group.durationMs).toBeCloseTo(6, 6);
  });

  it("places each bar by its start and duration within the trace's window", () => {
    const [root, instance, write] = traceGroup("t1", step).rows;
    expect(root.offset).toBe(0);
    expect(root.width).toBeCloseTo(0.5, 6);
    expect(instance.offset).toBeCloseTo(1 / 6, 6);
    expect(write.offset).toBeCloseTo(4 / 6, 6);
    expect(write.offset + write.width).toBeCloseTo(1, 6);
  });

  it("puts the newest trace first and survives a cycle", () => {
    const groups = waterfall([...step, span("t2", "x", "y", "envhost.step", 200, 1), span("t2", "y", "x", "env.step", 200.0005, 0.2)]);
    expect(groups.map((g) => g.traceId)).toEqual(["t2", "t1"]);
    expect(groups[0].rows.map((r) => [r.span.name, r.depth])).toEqual([["envhost.step", 0], ["env.step", 1]]);
  });

  it("formats durations for reading", () => {
    expect(formatMs(0.8412)).toBe("0.84 ms");
    expect(formatMs(12.34)).toBe("12.3 ms");
    expect(formatMs(1200)).toBe("1.20 s");
  });
});
