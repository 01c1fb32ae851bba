// The episode's plots, one uPlot chart each (reward, every agent.<name>, info.is_success, and
// the play back's match per step once it runs), all with their cursor on the replay's step.
import { memo } from "react";
import type { EpisodePlots, PlotSpec } from "../../lib/replay/plotData";
import { type ChartMark, UPlotChart } from "./UPlotChart";

interface Props {
  plots: EpisodePlots;
  extra: readonly PlotSpec[];
  step: number;
  marks: readonly ChartMark[];
  onSeek: (step: number) => void;
}

function testIdOf(spec: PlotSpec): string {
  return `plot-${spec.id.replace(/[^A-Za-z0-9_-]/g, "-")}`;
}

export const ReplayPlots = memo(function ReplayPlots({ plots, extra, step, marks, onSeek }: Props) {
  const all = [...plots.plots, ...extra];
  if (all.length === 0) return <p className="muted">This episode has no rewards or agent data to plot.</p>;
  return (
    <div className="replay-plots">
      {all.map((spec) => (
        <UPlotChart key={spec.id} spec={spec} x={plots.x} step={step} marks={marks} onSeek={onSeek}
          testId={testIdOf(spec)} height={spec.stepped ? 110 : 150} />
      ))}
    </div>
  );
});
