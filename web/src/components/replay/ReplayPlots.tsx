// The episode's plots, one uPlot chart each, all with their cursor on the replay's step: the
// reward, every agent.<name>, info.is_success, the play back's match per step once it runs, and
// every observation and action (lib/replay/signals.ts; a picker when there are many charts,
// images and too-wide rows named instead). Dragging across any chart zooms them all to those
// steps; a double-click or "whole episode" shows it all again.
// data-testid: plot-<id> (a chart), plots-zoom (data-min/data-max while zoomed), plots-zoom-reset,
// signals (the observation and action section), signal-skipped-<array>, signal-loading-<array>,
// signal-error-<array>, signal-picker (SignalPicker.tsx).
import { memo, useCallback, useState } from "react";
import { type EpisodePlots, type PlotSpec, testIdPart } from "../../lib/replay/plotData";
import type { SignalGroup, Signals } from "../../lib/replay/signals";
import { sameZoom, type StepRange, zoomOf } from "../../lib/replay/zoom";
import { SignalPicker } from "./SignalPicker";
import { type ChartMark, UPlotChart } from "./UPlotChart";

/** More observation and action charts than this get a picker. */
const PICKER_FROM = 5;

interface Props {
  plots: EpisodePlots;
  extra: readonly PlotSpec[];
  signals: Signals;
  step: number;
  first: number;
  last: number;
  marks: readonly ChartMark[];
  onSeek: (step: number) => void;
}

export const ReplayPlots = memo(function ReplayPlots({ plots, extra, signals, step, first, last, marks, onSeek }: Props) {
  const [zoom, setZoom] = useState<StepRange | null>(null);
  const onZoom = useCallback((range: StepRange) => {
    const next = zoomOf(range, first, last);
    setZoom((old) => (sameZoom(old, next) ? old : next));
  }, [first, last]);
  const all = [...plots.plots, ...extra];
  const chart = (spec: PlotSpec) => (
    <UPlotChart key={spec.id} spec={spec} x={plots.x} step={step} marks={marks} onSeek={onSeek}
      zoom={zoom} onZoom={onZoom} testId={`plot-${testIdPart(spec.id)}`} height={spec.stepped && spec.flag !== false ? 110 : 150} />
  );
  return (
    <>
      <p className="muted plots-zoom" data-testid="plots-zoom" data-min={zoom?.min} data-max={zoom?.max}>
        {zoom === null
          ? <>Drag across a plot to zoom into those steps; double-click to see the whole episode again.</>
          : <>Steps {zoom.min}–{zoom.max} of {first}–{last}.{" "}
            <button type="button" className="link-button" data-testid="plots-zoom-reset" onClick={() => setZoom(null)}>
              whole episode</button></>}
      </p>
      {all.length === 0
        ? <p className="muted">This episode has no rewards or agent data to plot.</p>
        : <div className="replay-plots">{all.map(chart)}</div>}
      <SignalSection signals={signals} chart={chart} />
    </>
  );
});

function SignalSection({ signals, chart }: { signals: Signals; chart: (spec: PlotSpec) => JSX.Element }) {
  const { layout, shown, setShown } = signals;
  const shownGroups = layout.groups.filter((g) => shown.has(g.id));
  const pending = (g: SignalGroup) => signals.arrays.get(g.array);
  const notes = new Set<string>();
  return (
    <section className="signals" data-testid="signals" aria-label="Observation and action">
      <h2>Observation and action</h2>
      {layout.groups.length === 0 && layout.skipped.length === 0 && (
        <p className="muted">This episode has no observation or action arrays.</p>
      )}
      {layout.skipped.map((s) => (
        <p key={s.array} className="muted" data-testid={`signal-skipped-${testIdPart(s.array)}`}>
          <code>{s.array}</code>: {s.reason}.
        </p>
      ))}
      {layout.groups.length >= PICKER_FROM && <SignalPicker groups={layout.groups} shown={shown} onShown={setShown} />}
      <div className="replay-plots">
        {shownGroups.map((g) => {
          const spec = signals.plots.get(g.id);
          if (spec) return chart(spec);
          const state = pending(g);
          if (notes.has(g.array)) return null;
          notes.add(g.array);
          return state?.state === "error"
            ? <p key={g.id} className="error" data-testid={`signal-error-${testIdPart(g.array)}`}>{g.array}: {state.message}</p>
            : <p key={g.id} className="muted" data-testid={`signal-loading-${testIdPart(g.array)}`}>Loading {g.array}…</p>;
        })}
      </div>
    </section>
  );
}
