// One metric of some runs as a uPlot chart (the replay's plots use uPlot too): each group of two
// or more runs drawn as its mean line with its min-max band shaded, each other run as a line
// (lib/runs/runs.ts `chartOf`), with a legend of its own below it.
// data-testid: <testId> (the figure: data-lines, data-bands, data-points, data-axis,
// data-smoothing, data-signature: a number that changes whenever the drawn values do),
// <testId>-canvas, <testId>-legend, <testId>-legend-item (data-runs), <testId>-empty.
import { useEffect, useMemo, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { ChartData, XAxis } from "../../lib/runs/runs";

const AXIS_LABEL: Record<XAxis, string> = { step: "step", frames: "frames", time: "seconds since the run's first point" };

interface Props {
  chart: ChartData;
  axis: XAxis;
  smoothing: number;
  height?: number;
  testId: string;
  title?: string;
  legend?: boolean;
}

function translucent(color: string, alpha: number): string {
  const n = parseInt(color.slice(1), 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
}

/** A number that changes with the drawn values (for the page's tests and nothing else). */
function signature(chart: ChartData): number {
  let sum = 0;
  chart.series.forEach((s, i) => s.values.forEach((v, j) => { if (v !== null) sum += v * (1 + ((i + j) % 7)) + chart.x[j] * 1e-3; }));
  return Math.round(sum * 1000) / 1000;
}

export function RunsChart({ chart, axis, smoothing, height = 320, testId, title, legend = true }: Props) {
  const box = useRef<HTMLDivElement>(null);
  const points = useMemo(() => chart.series.reduce((n, s) => n + s.values.filter((v) => v !== null).length, 0), [chart]);

  useEffect(() => {
    const element = box.current;
    if (!element || chart.x.length === 0) return undefined;
    const options: uPlot.Options = {
      width: Math.max(240, element.clientWidth),
      height,
      scales: { x: { time: false } },
      legend: { show: false },
      cursor: { y: false, drag: { x: true, y: false, setScale: true } },
      series: [
        { label: AXIS_LABEL[axis] },
        ...chart.series.map((s): uPlot.Series => ({
          label: s.label,
          stroke: s.kind === "min" || s.kind === "max" ? translucent(s.color, 0.35) : s.color,
          width: s.kind === "min" || s.kind === "max" ? 0.5 : s.kind === "mean" ? 2 : 1.5,
          spanGaps: true,
          points: { show: false },
        })),
      ],
      bands: chart.bands.map(([max, min]) => ({
        series: [max + 1, min + 1] as [number, number], fill: translucent(chart.series[max].color, 0.18),
      })),
      axes: [{ label: AXIS_LABEL[axis] }, { size: 64 }],
    };
    const data = [chart.x, ...chart.series.map((s) => s.values)] as uPlot.AlignedData;
    const u = new uPlot(options, data, element);
    const resize = new ResizeObserver(() => {
      const width = Math.max(240, element.clientWidth);
      if (width !== u.width) u.setSize({ width, height });
    });
    resize.observe(element);
    return () => {
      resize.disconnect();
      u.destroy();
    };
  }, [chart, axis, height]);

  const lines = chart.series.filter((s) => s.kind === "line" || s.kind === "mean").length;
  return (
    <figure className="runs-chart" data-testid={testId} data-lines={lines} data-bands={chart.bands.length}
      data-points={points} data-axis={axis} data-smoothing={smoothing} data-signature={signature(chart)}>
      {title ? <figcaption>{title}</figcaption> : null}
      {chart.x.length === 0
        ? <p className="muted" data-testid={`${testId}-empty`}>No points to draw on this axis.</p>
        : <div ref={box} className="runs-chart-canvas" data-testid={`${testId}-canvas`} />}
      {legend && chart.legend.length > 0 ? (
        <ul className="runs-legend" data-testid={`${testId}-legend`}>
          {chart.legend.map((item) => (
            <li key={item.label} data-testid={`${testId}-legend-item`} data-runs={item.runs}>
              <span className={item.runs > 1 ? "runs-swatch runs-swatch-band" : "runs-swatch"}
                style={{ background: item.runs > 1 ? translucent(item.color, 0.3) : item.color, borderColor: item.color }} />
              {item.label}{item.runs > 1 ? ", min–max shaded" : ""}
            </li>
          ))}
        </ul>
      ) : null}
    </figure>
  );
}
