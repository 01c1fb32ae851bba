// A session's recent traces (GET /v0/sessions/{id}/trace) as waterfall rows: one group per trace
// (a step), newest first; in a group one row per span, depth-first from its roots (a span whose
// parent is not among the spans, the client's for instance, is a root), children by start; each
// bar placed by its start and duration within its trace's window, as fractions of that window.
import type { Schemas } from "../../api/client";

export type TraceSpan = Schemas["TraceSpanPublic"];

export interface WaterfallRow {
  span: TraceSpan;
  depth: number;
  /** where the bar starts and how wide it is, as fractions (0..1) of the trace's window */
  offset: number;
  width: number;
}

export interface WaterfallGroup {
  traceId: string;
  /** the first span's start, seconds since the epoch */
  start: number;
  /** from the first start to the last end, milliseconds */
  durationMs: number;
  /** the root's name ("envhost.step", "env.step" of the SDK, ...) */
  title: string;
  rows: WaterfallRow[];
}

function byStart(a: TraceSpan, b: TraceSpan): number {
  return a.start - b.start || a.span_id.localeCompare(b.span_id);
}

/** The waterfall of one trace's spans. */
export function traceGroup(traceId: string, spans: TraceSpan[]): WaterfallGroup {
  const ids = new Set(spans.map((s) => s.span_id));
  const children = new Map<string, TraceSpan[]>();
  const roots: TraceSpan[] = [];
  for (const span of spans) {
    const parent = span.parent_span_id;
    if (parent && ids.has(parent) && parent !== span.span_id) {
      const list = children.get(parent) ?? [];
      list.push(span);
      children.set(parent, list);
    } else {
      roots.push(span);
    }
  }
  const start = Math.min(...spans.map((s) => s.start));
  const end = Math.max(...spans.map((s) => s.start + s.duration_ms / 1000));
  const windowMs = Math.max((end - start) * 1000, 1e-6);
  const rows: WaterfallRow[] = [];
  const seen = new Set<string>();
  const visit = (span: TraceSpan, depth: number) => {
    if (seen.has(span.span_id)) return; // a cycle in bad data: each span once
    seen.add(span.span_id);
    const offset = ((span.start - start) * 1000) / windowMs;
    rows.push({ span, depth, offset: clamp(offset), width: clamp(Math.min(span.duration_ms / windowMs, 1 - offset)) });
    for (const child of (children.get(span.span_id) ?? []).sort(byStart)) visit(child, depth + 1);
  };
  for (const root of roots.sort(byStart)) visit(root, 0);
  for (const left of [...spans].sort(byStart)) visit(left, 0); // parents in a cycle (bad data): shown as roots
  return { traceId, start, durationMs: (end - start) * 1000, title: rows[0]?.span.name ?? "", rows };
}

/** The groups of `spans`, newest trace first. */
export function waterfall(spans: TraceSpan[]): WaterfallGroup[] {
  const traces = new Map<string, TraceSpan[]>();
  for (const span of spans) {
    const list = traces.get(span.trace_id) ?? [];
    list.push(span);
    traces.set(span.trace_id, list);
  }
  return [...traces].map(([id, list]) => traceGroup(id, list)).sort((a, b) => b.start - a.start);
}

/** A duration for a row: "0.84 ms", "12.3 ms", "1.20 s". */
export function formatMs(ms: number): string {
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 10) return `${ms.toFixed(1)} ms`;
  return `${ms.toFixed(2)} ms`;
}

function clamp(x: number): number {
  return Math.min(Math.max(x, 0), 1);
}
