// The Usage page's chart: instance-hours per day as stacked bars, one colour per environment
// (lib/usage/usage.ts stacks them; the largest environment at the bottom). uPlot, as the other
// charts: the bars are drawn tallest stack first, each environment's bar from 0 to its top, so
// the later (lower) ones cover the parts below and the stack reads bottom to top. The legend
// shows each environment's total over the range, and its own hours on the day under the cursor.
// data-testid: usage-chart (the figure), usage-chart-empty.
import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { agentColor, translucent } from "../../lib/comparisons/chart";
import { formatHours, type UsageChartData } from "../../lib/usage/usage";

const HEIGHT = 280;

/** An axis value: a few significant digits, however small (a short session is 0.0001 h). */
function axisValue(value: number): string {
  return value === 0 ? "0" : String(Number(value.toPrecision(3)));
}
const DAY_INCREMENTS = [1, 2, 5, 7, 14, 28, 56, 91, 182, 364];

export function UsageChart({ chart }: { chart: UsageChartData }) {
  const box = useRef<HTMLDivElement>(null);
  const empty = chart.envs.length === 0 || chart.days.length === 0;

  useEffect(() => {
    const element = box.current;
    if (!element || empty) return;
    const x = chart.days.map((_, i) => i);
    const order = chart.envs.map((_, e) => e).reverse(); // the tallest stack first
    const bars = uPlot.paths.bars!({ size: [0.7, 48], gap: 2 });
    const options: uPlot.Options = {
      width: Math.max(320, element.clientWidth),
      height: HEIGHT,
      scales: {
        x: { time: false, range: () => [-0.5, chart.days.length - 0.5] },
        y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
      },
      legend: { live: true },
      cursor: { y: false, drag: { x: false, y: false, setScale: false }, points: { show: false } },
      series: [
        { label: "day", value: (_u, v) => (v === null || v === undefined ? "–" : chart.days[Math.round(v)] ?? "–") },
        ...order.map((e): uPlot.Series => ({
          label: `${chart.envs[e]} (${formatHours(chart.hours[e].reduce((a, b) => a + b, 0))} h)`,
          stroke: agentColor(e),
          fill: translucent(agentColor(e), 0.85),
          width: 1,
          paths: bars,
          points: { show: false },
          value: (_u, _v, _s, idx) => (idx === null || idx === undefined ? "–" : formatHours(chart.hours[e][idx])),
        })),
      ],
      axes: [
        {
          incrs: DAY_INCREMENTS,
          values: (_u, splits) => splits.map((s) => (Number.isInteger(s) && chart.days[s] ? chart.days[s].slice(5) : "")),
        },
        { size: 72, label: "instance-hours", labelSize: 18, values: (_u, splits) => splits.map(axisValue) },
      ],
    };
    // A day an environment did not run on has no bar of its own (not a 0-high line).
    const data = [x, ...order.map((e) => chart.tops[e].map((top, d) => (chart.hours[e][d] > 0 ? top : null)))] as uPlot.AlignedData;
    const u = new uPlot(options, data, element);
    const resize = new ResizeObserver(() => {
      const width = Math.max(320, element.clientWidth);
      if (width !== u.width) u.setSize({ width, height: HEIGHT });
    });
    resize.observe(element);
    return () => {
      resize.disconnect();
      u.destroy();
    };
  }, [chart, empty]);

  return (
    <figure className="usage-chart" data-testid="usage-chart">
      <figcaption>Instance-hours per day, by environment (UTC days)</figcaption>
      {empty ? <p className="muted" data-testid="usage-chart-empty">No instance-hours in this range.</p> : <div ref={box} />}
    </figure>
  );
}
