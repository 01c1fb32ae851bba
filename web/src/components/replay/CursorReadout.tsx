// What the recording says at the cursor step: the step, its reward (as plotted), the return so
// far, info.is_success there, and every agent value, each rounded to 4 significant digits (with
// its unit: agent.compute_s in ms or µs) and given exactly in its data-value attribute.
import { formatValue, unitOfName } from "../../lib/replay/numberFormat";
import { type EpisodePlots, valueAtStep } from "../../lib/replay/plotData";

interface Props {
  step: number;
  last: number;
  plots: EpisodePlots;
  returnSoFar: number | null;
  ended: string | null;
}

function Value({ value, unit = null, testId }: { value: number | null; unit?: string | null; testId: string }) {
  return <dd data-testid={testId} data-value={value ?? undefined} title={value === null ? undefined : String(value)}>{formatValue(value, unit)}</dd>;
}

export function CursorReadout({ step, last, plots, returnSoFar, ended }: Props) {
  const reward = plots.plots.find((p) => p.id === "reward");
  const success = plots.plots.find((p) => p.id === "is_success");
  const agents = plots.plots.filter((p) => p.id.startsWith("agent."));
  const successValue = success ? valueAtStep(success.series[0], step) : null;
  return (
    <dl className="cursor-readout" aria-live="off">
      <div><dt>Step</dt><dd data-testid="cursor-step">{step}</dd><span className="muted"> / {last}</span></div>
      <div><dt>Reward</dt><Value testId="cursor-reward" value={reward ? valueAtStep(reward.series[0], step) : null} /></div>
      <div><dt>Return so far</dt><Value testId="cursor-return" value={returnSoFar} /></div>
      <div>
        <dt>is_success</dt>
        <dd data-testid="cursor-success" className={successValue === 1 ? "good" : undefined}>
          {success ? (successValue === null ? "–" : successValue === 1 ? "yes" : "no") : "not reported"}
        </dd>
      </div>
      {step === last && ended && <div><dt>Episode end</dt><dd data-testid="cursor-ended">{ended}</dd></div>}
      {agents.flatMap((p) => p.series.map((s) => (
        <div key={`${p.id}-${s.label}`}>
          <dt>{`agent.${s.label}`}</dt>
          <Value testId={`cursor-agent-${s.label}`} value={valueAtStep(s, step)} unit={unitOfName(s.label)} />
        </div>
      )))}
    </dl>
  );
}
