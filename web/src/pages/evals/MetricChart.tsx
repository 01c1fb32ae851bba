// A chart of metrics with their error bars: one row per metric (and per eval, when several are
// compared), a bar to its value and a whisker over value ± stderr, on one scale that holds 0 and
// every error bar ([0, 1] for scores in it). An SVG, labelled for screen readers row by row.
// data-testid: metric-chart, metric-bar (data-key "score/metric", data-eval, data-value,
// data-stderr), metric-errorbar.
import { chartDomain } from "../../lib/evals/results";
import { numberText, valueText } from "../../lib/evals/status";

export interface ChartRow {
  key: string;  // "score/metric"
  label: string;  // what the row says on its left
  evalId: string;
  value: number;
  stderr: number | null;
  tone: number;  // colour index: the eval's place in a comparison
}

const WIDTH = 720;
const LABEL = 220;
const VALUE = 120;
const ROW = 26;
const COLOURS = ["#2457d6", "#d6732b", "#1d7a3a", "#8e44ad", "#b3261e", "#5b6472"];

export function MetricChart({ rows, title }: { rows: ChartRow[]; title: string }) {
  if (!rows.length) return null;
  const [low, high] = chartDomain(rows);
  const plot = WIDTH - LABEL - VALUE;
  const x = (v: number) => LABEL + ((v - low) / (high - low)) * plot;
  const height = rows.length * ROW + 24;
  return (
    <figure className="metric-chart" data-testid="metric-chart">
      <svg viewBox={`0 0 ${WIDTH} ${height}`} width="100%" role="img" aria-label={title}>
        <line x1={x(0)} x2={x(0)} y1={0} y2={rows.length * ROW} className="metric-axis" />
        {rows.map((row, i) => {
          const y = i * ROW + 4;
          const from = Math.min(x(0), x(row.value));
          const spread = row.stderr ?? 0;
          const colour = COLOURS[row.tone % COLOURS.length];
          return (
            <g key={`${row.key}-${row.evalId}`} data-testid="metric-bar" data-key={row.key} data-eval={row.evalId}
               data-value={row.value} data-stderr={row.stderr ?? ""}>
              <title>{`${row.label}: ${valueText(row.value, row.stderr)}`}</title>
              <text x={LABEL - 8} y={y + 13} textAnchor="end" className="metric-label">{row.label}</text>
              <rect x={from} y={y} width={Math.max(Math.abs(x(row.value) - x(0)), 1)} height={ROW - 10} fill={colour} opacity={0.75} />
              {row.stderr !== null ? (
                <g data-testid="metric-errorbar" className="metric-errorbar">
                  <line x1={x(row.value - spread)} x2={x(row.value + spread)} y1={y + 8} y2={y + 8} />
                  <line x1={x(row.value - spread)} x2={x(row.value - spread)} y1={y + 2} y2={y + 14} />
                  <line x1={x(row.value + spread)} x2={x(row.value + spread)} y1={y + 2} y2={y + 14} />
                </g>
              ) : null}
              <text x={LABEL + plot + 8} y={y + 13} className="metric-value">{valueText(row.value, row.stderr)}</text>
            </g>
          );
        })}
        <text x={LABEL} y={height - 6} className="metric-tick">{numberText(low)}</text>
        <text x={LABEL + plot} y={height - 6} textAnchor="end" className="metric-tick">{numberText(high)}</text>
      </svg>
      <figcaption className="muted">Bars: each metric's value; whiskers: ± its standard error.</figcaption>
    </figure>
  );
}
