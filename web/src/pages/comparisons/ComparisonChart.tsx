// The Comparisons page's uPlot chart (lib/comparisons/chart.ts makes its data): one line per
// agent, the world changes as labelled vertical lines, each agent's recovery shaded in its
// colour. The legend shows each agent's window mean at the cursor. The side-by-side replay's
// cursor (a session step) is drawn as a solid line, and a click on the plot moves it there.
import { type MutableRefObject, useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { ComparisonChart as ChartData } from "../../lib/comparisons/chart";

const CHANGE_COLOR = "#5b6472";
const REPLAY_CURSOR_COLOR = "#111827";
const HEIGHT = 320;
const STEP_INCREMENTS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 1e6, 1e7];
const LABEL_CHARACTERS = 48;

function showValue(_u: uPlot, value: number | null): string {
  return value === null || value === undefined ? "–" : value.toFixed(4);
}

function headroom(_u: uPlot, min: number | null, max: number | null): uPlot.Range.MinMax {
  if (min === null || max === null) return [0, 1];
  const span = max - min || Math.abs(max) || 1;
  return [min - 0.05 * span, max + 0.25 * span];
}

function shorten(text: string): string {
  return text.length > LABEL_CHARACTERS ? `${text.slice(0, LABEL_CHARACTERS - 1)}…` : text;
}

/** Draws the recovery bands under the lines, and the world changes and the replay's cursor over them. */
function overlayPlugin(chart: ChartData, replayCursor: MutableRefObject<number | null>): uPlot.Plugin {
  const inPlot = (u: uPlot, step: number) => Math.round(u.valToPos(step, "x", true));
  return {
    hooks: {
      drawClear: (u) => {
        const { ctx, bbox } = u;
        ctx.save();
        ctx.beginPath();
        ctx.rect(bbox.left, bbox.top, bbox.width, bbox.height);
        ctx.clip();
        for (const band of chart.bands) {
          const left = inPlot(u, band.from);
          const right = inPlot(u, band.to);
          ctx.fillStyle = band.color;
          ctx.fillRect(left, bbox.top, Math.max(1, right - left), bbox.height);
        }
        ctx.restore();
      },
      draw: (u) => {
        const { ctx, bbox } = u;
        const ratio = devicePixelRatio;
        ctx.save();
        ctx.lineWidth = 2 * ratio;
        ctx.strokeStyle = CHANGE_COLOR;
        ctx.fillStyle = CHANGE_COLOR;
        ctx.font = `${11 * ratio}px system-ui, sans-serif`;
        ctx.textAlign = "left"; // uPlot leaves its own alignment (its axes') on the context
        ctx.textBaseline = "alphabetic";
        ctx.setLineDash([6 * ratio, 4 * ratio]);
        chart.changes.forEach((change, i) => {
          const left = inPlot(u, change.at);
          if (left < bbox.left || left > bbox.left + bbox.width) return;
          ctx.beginPath();
          ctx.moveTo(left, bbox.top);
          ctx.lineTo(left, bbox.top + bbox.height);
          ctx.stroke();
          const label = shorten(`${change.at}: ${change.label}`);
          const width = ctx.measureText(label).width;
          // Labels go right of their line, or left of it near the plot's right edge; every other
          // one a line lower, so neighbours overlap less.
          const x = left + 4 * ratio + width > bbox.left + bbox.width ? left - 4 * ratio - width : left + 4 * ratio;
          ctx.fillText(label, x, bbox.top + (14 + (i % 2) * 14) * ratio);
        });
        const cursor = replayCursor.current;
        const at = cursor === null ? null : inPlot(u, cursor);
        if (at !== null && at >= bbox.left && at <= bbox.left + bbox.width) {
          ctx.setLineDash([]);
          ctx.strokeStyle = REPLAY_CURSOR_COLOR;
          ctx.lineWidth = 1.5 * ratio;
          ctx.beginPath();
          ctx.moveTo(at, bbox.top);
          ctx.lineTo(at, bbox.top + bbox.height);
          ctx.stroke();
        }
        ctx.restore();
      },
    },
  };
}

interface Props {
  chart: ChartData;
  /** The side-by-side replay's cursor, a session step (null: none). */
  cursor?: number | null;
  /** A click on the plot at session step `step`. */
  onPick?: (step: number) => void;
}

export function ComparisonChart({ chart, cursor = null, onPick }: Props) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const replayCursor = useRef(cursor);
  replayCursor.current = cursor;
  const pick = useRef(onPick);
  pick.current = onPick;

  useEffect(() => {
    plot.current?.redraw(false);
  }, [cursor]);

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const options: uPlot.Options = {
      width: Math.max(300, element.clientWidth),
      height: HEIGHT,
      // Headroom above the lines for the changes' labels.
      scales: { x: { time: false }, y: { range: headroom } },
      legend: { live: true },
      cursor: { y: false, drag: { x: false, y: false, setScale: false }, points: { size: 6 } },
      series: [
        { label: "step", value: (_u, v) => (v === null || v === undefined ? "–" : String(v)) },
        ...chart.series.map((s): uPlot.Series => ({
          label: s.label, stroke: s.color, width: 2, spanGaps: false, value: showValue,
        })),
      ],
      axes: [
        { incrs: STEP_INCREMENTS, label: "session step" },
        { size: 64, label: "mean reward per step" },
      ],
      plugins: [overlayPlugin(chart, replayCursor)],
    };
    const data = [chart.x, ...chart.series.map((s) => s.values)] as uPlot.AlignedData;
    const u = new uPlot(options, data, element);
    plot.current = u;
    const onClick = () => {
      const left = u.cursor.left;
      if (left === undefined || left < 0 || !pick.current) return;
      pick.current(Math.round(u.posToVal(left, "x")));
    };
    u.over.addEventListener("click", onClick);
    const resize = new ResizeObserver(() => {
      const width = Math.max(300, element.clientWidth);
      if (width !== u.width) u.setSize({ width, height: HEIGHT });
    });
    resize.observe(element);
    return () => {
      resize.disconnect();
      u.over.removeEventListener("click", onClick);
      plot.current = null;
      u.destroy();
    };
  }, [chart]);

  return (
    <figure className="comparison-chart" data-testid="comparison-chart" data-series={chart.series.length}
      data-changes={chart.changes.length} data-bands={chart.bands.length} data-cursor={cursor ?? undefined}>
      <figcaption>Reward per step, averaged over the window</figcaption>
      <div ref={box} className="comparison-chart-canvas" />
    </figure>
  );
}
