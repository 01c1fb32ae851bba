// What the recording says of the frame at the cursor beyond its reward: the true values of the
// labelled observation parts (state.<name>: what the environment really was, even while a
// sensor world change showed the agent something else) and the action that followed the frame
// with the teacher's suggestion for it.
// data-testid: frame-details, state-<name> (a part's values), next-action-step, next-action-taken,
// teacher-suggestion ("none" where the recording has none), teacher-agrees ("yes"/"no").
import { useMemo } from "react";
import { formatNumber } from "../../lib/format";
import type { EpisodeArray } from "../../lib/replay/arrays";
import { stepDetails } from "../../lib/replay/stepDetails";
import type { EpisodeSteps } from "../../lib/replay/steps";

interface Props {
  arrays: Readonly<Record<string, EpisodeArray>>;
  steps: EpisodeSteps;
  step: number;
  actionSpace: unknown;
}

function json(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) => (typeof v === "number" && !Number.isInteger(v) ? Number(v.toFixed(4)) : v));
}

export function FrameDetails({ arrays, steps, step, actionSpace }: Props) {
  const details = useMemo(() => stepDetails(arrays, steps, step, actionSpace), [arrays, steps, step, actionSpace]);
  if (details.state.length === 0 && !details.hasTeacher) return null;
  const { next } = details;
  return (
    <section className="frame-details" data-testid="frame-details" aria-label="This frame">
      <h2>At step {step}</h2>
      {details.state.length > 0 && (
        <table className="state-values">
          <caption className="muted">true values (state.&lt;name&gt;)</caption>
          <tbody>
            {details.state.map((part) => (
              <tr key={part.name}>
                <th scope="row">{part.name}</th>
                <td className="mono" data-testid={`state-${part.name}`}>{part.values.map((v) => formatNumber(v)).join(", ")}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {details.hasTeacher && (
        next ? (
          <dl className="next-action">
            <div><dt>next action (step <span data-testid="next-action-step">{next.step}</span>)</dt>
              <dd className="mono" data-testid="next-action-taken">{json(next.taken)}</dd></div>
            <div><dt>teacher suggested</dt>
              <dd className="mono" data-testid="teacher-suggestion">{next.suggested === null ? "none" : json(next.suggested)}</dd></div>
            {next.suggested !== null && (
              <div><dt>as suggested</dt>
                <dd data-testid="teacher-agrees">{json(next.suggested) === json(next.taken) ? "yes" : "no"}</dd></div>
            )}
          </dl>
        ) : <p className="muted">The episode's last step: no action follows.</p>
      )}
    </section>
  );
}
