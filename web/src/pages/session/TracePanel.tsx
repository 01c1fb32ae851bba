// The session's Trace view: its newest traced steps as a waterfall (lib/traces/waterfall.ts),
// one row per span indented by its parent, a bar by start and duration within the step, the
// hop's name, its service and its milliseconds. Loaded when shown and on Refresh, never on its
// own. A step is traced when its client traces it or the platform samples it
// (OTEL_TRACES_SAMPLER, docs/observability.md): without either the view says so.
// data-testid: trace-view, trace-show, trace-refresh, trace-loading, trace-empty, trace-error,
// trace-group (data-trace-id), trace-row (data-name, data-service, data-depth), trace-bar, trace-ms.
import { useState } from "react";
import { api, must } from "../../api/client";
import { formatMs, waterfall, type WaterfallGroup } from "../../lib/traces/waterfall";

const STEPS = 10;

type View =
  | { state: "hidden" }
  | { state: "loading"; groups: WaterfallGroup[] }
  | { state: "ready"; groups: WaterfallGroup[]; at: Date }
  | { state: "error"; message: string };

export function TracePanel({ sessionId }: { sessionId: string }) {
  const [view, setView] = useState<View>({ state: "hidden" });

  const load = async () => {
    setView((previous) => ({ state: "loading", groups: previous.state === "ready" ? previous.groups : [] }));
    try {
      const answer = await must(api.GET("/v0/sessions/{session_id}/trace", {
        params: { path: { session_id: sessionId }, query: { steps: STEPS } },
      }));
      setView({ state: "ready", groups: waterfall(answer.spans), at: new Date() });
    } catch (e) {
      setView({ state: "error", message: (e as { detail?: string }).detail ?? String(e) });
    }
  };

  return (
    <section className="panel trace-view" data-testid="trace-view" aria-label="Trace">
      <header className="trace-header">
        <h2>Trace</h2>
        {view.state === "hidden" ? (
          <button type="button" data-testid="trace-show" onClick={() => void load()}>Show the last {STEPS} steps</button>
        ) : (
          <button type="button" data-testid="trace-refresh" disabled={view.state === "loading"} onClick={() => void load()}>Refresh</button>
        )}
        {view.state === "ready" ? <span className="muted">as of {view.at.toLocaleTimeString()}</span> : null}
        {view.state === "loading" ? <span className="muted" data-testid="trace-loading">asking every service…</span> : null}
      </header>
      {view.state === "error" ? <p className="error" role="alert" data-testid="trace-error">{view.message}</p> : null}
      {view.state === "ready" && view.groups.length === 0 ? (
        <p className="muted" data-testid="trace-empty">
          No traced steps in the last minutes. Steps are traced when the client traces them (the SDK with
          OTEL_EXPORTER_OTLP_ENDPOINT set) or the platform samples them (OTEL_TRACES_SAMPLER).
        </p>
      ) : null}
      {view.state === "ready" || view.state === "loading" ? view.groups.map((group) => <TraceGroup key={group.traceId} group={group} />) : null}
    </section>
  );
}

function TraceGroup({ group }: { group: WaterfallGroup }) {
  return (
    <div className="trace-group" data-testid="trace-group" data-trace-id={group.traceId}>
      <div className="trace-group-title">
        <span className="mono">{group.title}</span>
        <span className="muted">{new Date(group.start * 1000).toLocaleTimeString()} · {formatMs(group.durationMs)}</span>
      </div>
      {group.rows.map((row) => (
        <div key={row.span.span_id} className={`trace-row${row.span.error ? " trace-row-error" : ""}`} data-testid="trace-row"
          data-name={row.span.name} data-service={row.span.service} data-depth={row.depth}
          title={Object.entries(row.span.attributes).map(([k, v]) => `${k}=${v}`).join("\n")}>
          <span className="trace-name" style={{ paddingLeft: `${row.depth * 1.1}em` }}>
            <span className="mono">{row.span.name}</span> <span className="muted trace-service">{row.span.service}</span>
          </span>
          <span className="trace-track">
            <span className="trace-bar" data-testid="trace-bar"
              style={{ left: `${row.offset * 100}%`, width: `max(${row.width * 100}%, 2px)` }} />
          </span>
          <span className="trace-ms mono" data-testid="trace-ms">{formatMs(row.span.duration_ms)}</span>
        </div>
      ))}
    </div>
  );
}
