// One uPlot chart of a PlotSpec over an episode's steps. Its cursor follows the replay's cursor
// step (and comes back to it when the mouse leaves); a click on the chart moves the replay
// there. Marks (world changes, the first divergent step) are drawn as vertical lines by a
// uPlot draw hook. The legend shows each series' value at the cursor, as plotted.
import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { PlotSpec } from "../../lib/replay/plotData";

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
  height?: number;
  testId: string;
}

function showValue(_u: uPlot, value: number | null): string {
  return value === null || value === undefined ? "–" : String(value);
}

function placeCursor(u: uPlot, step: number) {
  if (step < 1 || u.data[0].length === 0) {
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

export function UPlotChart({ spec, x, step, marks, onSeek, height = 150, testId }: Props) {
  const box = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlot | null>(null);
  const stepNow = useRef(step);
  const marksNow = useRef(marks);
  const seek = useRef(onSeek);
  stepNow.current = step;
  marksNow.current = marks;
  seek.current = onSeek;

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const options: uPlot.Options = {
      width: Math.max(200, element.clientWidth),
      height,
      // A 0/1 flag (is_success, play back's match) keeps its two levels in view.
      scales: { x: { time: false }, ...(spec.stepped ? { y: { range: [-0.1, 1.1] as uPlot.Range.MinMax } } : {}) },
      legend: { live: true },
      cursor: { y: false, drag: { x: false, y: false, setScale: false }, points: { size: 6 } },
      hooks: { ready: [(u) => placeCursor(u, stepNow.current)] },
      series: [
        { label: "step", value: showValue },
        ...spec.series.map((s, i): uPlot.Series => ({
          label: s.label,
          stroke: COLORS[i % COLORS.length],
          width: 1.5,
          spanGaps: false,
          value: showValue,
          ...(spec.stepped ? { paths: uPlot.paths.stepped!({ align: 1 }) } : {}),
        })),
      ],
      axes: [{ incrs: STEP_INCREMENTS }, { size: 56 }],
      plugins: [marksPlugin(() => marksNow.current)],
    };
    const data = [x as number[], ...spec.series.map((s) => s.values)] as uPlot.AlignedData;
    const u = new uPlot(options, data, element);
    chart.current = u;
    placeCursor(u, stepNow.current);
    const leave = () => requestAnimationFrame(() => { if (chart.current === u) placeCursor(u, stepNow.current); });
    const click = () => {
      const idx = u.cursor.idx;
      if (idx !== null && idx !== undefined) seek.current(x[idx]);
    };
    u.over.addEventListener("mouseleave", leave);
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
      u.over.removeEventListener("click", click);
      u.destroy();
      if (chart.current === u) chart.current = null;
    };
  }, [spec, x, height]);

  useEffect(() => {
    if (chart.current) placeCursor(chart.current, step);
  }, [step]);

  useEffect(() => {
    chart.current?.redraw(false, false);
  }, [marks]);

  return (
    <figure className="replay-plot" data-testid={testId}>
      <figcaption>{spec.title}</figcaption>
      <div ref={box} className="replay-plot-canvas" />
    </figure>
  );
}
