// One uPlot chart of a PlotSpec over an episode's steps. Its cursor follows the replay's cursor
// step (and comes back to it when the mouse leaves); a click on the chart moves the replay
// there. Dragging across it zooms every chart to those steps (`zoom`, shared through `onZoom`);
// a double-click goes back to the whole episode. Marks (world changes, the first divergent step)
// are drawn as vertical lines by a uPlot draw hook. The legend shows each series' value at the
// cursor, rounded (lib/replay/numberFormat.ts), with its name for a Discrete action's values.
import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { formatTicks, formatValue, unitOfName } from "../../lib/replay/numberFormat";
import type { PlotSpec } from "../../lib/replay/plotData";
import type { StepRange } from "../../lib/replay/zoom";

export interface ChartMark {
  step: number;
  color: string;
}

/** Step numbers are whole: the x axis ticks at 1, 2, 5, 10, 20, 50... steps. */
const STEP_INCREMENTS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 1e6, 1e7];

const COLORS = ["#2457d6", "#d66a24", "#1d7a3a", "#9b2fae", "#b3261e", "#0e8a8a", "#7a5c1d", "#5b6472"];

interface Props {
  spec: PlotSpec;
  x: readonly number[];
  step: number;
  marks: readonly ChartMark[];
  onSeek: (step: number) => void;
  /** The steps every chart shows; null: the whole episode. */
  zoom: StepRange | null;
  onZoom: (range: StepRange) => void;
  height?: number;
  testId: string;
}

/** A mouse that moved less than this (px) between press and release clicked rather than dragged. */
const CLICK_SLOP = 4;

function valueShower(unit: string | null, names: readonly string[] | undefined) {
  return (_u: uPlot, value: number | null): string => {
    const text = formatValue(value, unit);
    const name = value !== null && value !== undefined && names ? names[value] : undefined;
    return name === undefined ? text : `${text} (${name})`;
  };
}

function tickShower(unit: string | null, names: readonly string[] | undefined) {
  return (_u: uPlot, splits: number[]): string[] => {
    if (names) return splits.map((v) => (Number.isInteger(v) && names[v] !== undefined ? names[v] : ""));
    return formatTicks(splits, unit);
  };
}

function dataRange(u: uPlot): StepRange | null {
  const xs = u.data[0];
  return xs.length === 0 ? null : { min: xs[0], max: xs[xs.length - 1] };
}

function placeCursor(u: uPlot, step: number) {
  const range = dataRange(u);
  const { min = range?.min, max = range?.max } = u.scales.x;
  if (range === null || min === undefined || max === undefined || step < Math.max(range.min, min) || step > Math.min(range.max, max)) {
    u.setCursor({ left: -10, top: -10 });
    return;
  }
  u.setCursor({ left: u.valToPos(step, "x"), top: u.bbox.height / devicePixelRatio / 2 });
}

function marksPlugin(marks: () => readonly ChartMark[]): uPlot.Plugin {
  return {
    hooks: {
      draw: (u) => {
        const { ctx, bbox } = u;
        ctx.save();
        ctx.lineWidth = 2 * devicePixelRatio;
        for (const mark of marks()) {
          const left = Math.round(u.valToPos(mark.step, "x", true));
          if (left < bbox.left || left > bbox.left + bbox.width) continue;
          ctx.strokeStyle = mark.color;
          ctx.beginPath();
          ctx.moveTo(left, bbox.top);
          ctx.lineTo(left, bbox.top + bbox.height);
          ctx.stroke();
        }
        ctx.restore();
      },
    },
  };
}

function applyZoom(u: uPlot, zoom: StepRange | null, applying: { current: boolean }) {
  const wanted = zoom ?? dataRange(u);
  if (wanted === null) return;
  const { min, max } = u.scales.x;
  if (min === wanted.min && max === wanted.max) return;
  applying.current = true;
  try {
    u.setScale("x", { min: wanted.min, max: wanted.max });
  } finally {
    applying.current = false;
  }
}

export function UPlotChart({ spec, x, step, marks, onSeek, zoom, onZoom, height = 150, testId }: Props) {
  const box = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlot | null>(null);
  const stepNow = useRef(step);
  const marksNow = useRef(marks);
  const seek = useRef(onSeek);
  const zoomNow = useRef(zoom);
  const zoomed = useRef(onZoom);
  const applying = useRef(false);
  stepNow.current = step;
  marksNow.current = marks;
  seek.current = onSeek;
  zoomNow.current = zoom;
  zoomed.current = onZoom;
  const xs = spec.x ?? x;

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const unit = spec.unit !== undefined ? spec.unit : unitOfName(spec.id);
    const names = spec.valueNames;
    const flag = spec.flag ?? spec.stepped;
    const options: uPlot.Options = {
      width: Math.max(200, element.clientWidth),
      height,
      // A 0/1 flag (is_success, play back's match) keeps its two levels in view.
      scales: { x: { time: false }, ...(flag ? { y: { range: [-0.1, 1.1] as uPlot.Range.MinMax } } : {}) },
      legend: { live: true },
      cursor: { y: false, drag: { x: true, y: false, setScale: true }, points: { size: 6 } },
      hooks: {
        ready: [(u) => {
          applyZoom(u, zoomNow.current, applying);
          placeCursor(u, stepNow.current);
        }],
        setScale: [(u, key) => {
          if (key !== "x") return;
          // the cursor stays on the replay's step in the new range (positions are valid only now)
          placeCursor(u, stepNow.current);
          if (applying.current) return;
          const { min, max } = u.scales.x;
          if (min !== undefined && max !== undefined) zoomed.current({ min, max });
        }],
      },
      series: [
        { label: "step", value: (_u, v) => (v === null || v === undefined ? "–" : String(v)) },
        ...spec.series.map((s, i): uPlot.Series => ({
          label: s.label,
          stroke: COLORS[i % COLORS.length],
          width: 1.5,
          spanGaps: false,
          value: valueShower(unit, names),
          ...(spec.stepped ? { paths: uPlot.paths.stepped!({ align: 1 }) } : {}),
        })),
      ],
      axes: [
        { incrs: STEP_INCREMENTS },
        {
          size: names ? 72 : 64,
          values: tickShower(unit, names),
          ...(names || spec.stepped ? { incrs: STEP_INCREMENTS } : {}),
        },
      ],
      plugins: [marksPlugin(() => marksNow.current)],
    };
    const data = [xs as number[], ...spec.series.map((s) => s.values)] as uPlot.AlignedData;
    const u = new uPlot(options, data, element);
    chart.current = u;
    placeCursor(u, stepNow.current);
    const leave = () => requestAnimationFrame(() => { if (chart.current === u) placeCursor(u, stepNow.current); });
    let pressedAt: number | null = null;
    const press = (e: MouseEvent) => { pressedAt = e.clientX; };
    const click = (e: MouseEvent) => {
      const dragged = pressedAt !== null && Math.abs(e.clientX - pressedAt) > CLICK_SLOP;
      pressedAt = null;
      if (dragged) return; // a drag zooms; it does not move the replay
      const idx = u.cursor.idx;
      if (idx !== null && idx !== undefined) seek.current(xs[idx]);
    };
    u.over.addEventListener("mouseleave", leave);
    u.over.addEventListener("mousedown", press);
    u.over.addEventListener("click", click);
    const resize = new ResizeObserver(() => {
      const width = Math.max(200, element.clientWidth);
      if (width !== u.width) {
        u.setSize({ width, height });
        placeCursor(u, stepNow.current);
      }
    });
    resize.observe(element);
    return () => {
      resize.disconnect();
      u.over.removeEventListener("mouseleave", leave);
      u.over.removeEventListener("mousedown", press);
      u.over.removeEventListener("click", click);
      u.destroy();
      if (chart.current === u) chart.current = null;
    };
  }, [spec, xs, height]);

  useEffect(() => {
    if (chart.current) placeCursor(chart.current, step);
  }, [step]);

  useEffect(() => {
    const u = chart.current;
    if (!u) return;
    applyZoom(u, zoom, applying);
    placeCursor(u, stepNow.current);
  }, [zoom]);

  useEffect(() => {
    chart.current?.redraw(false, false);
  }, [marks]);

  return (
    <figure className="replay-plot" data-testid={testId} data-x-min={zoom?.min} data-x-max={zoom?.max}>
      <figcaption>{spec.title}</figcaption>
      <div ref={box} className="replay-plot-canvas" />
    </figure>
  );
}
