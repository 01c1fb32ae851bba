// What the last answer said: step, reward, episode return, episode end, info, the observation
// (by label where the environment names its parts), the seed and the action sent.
// data-testid: live, step-count, reward, episode-return, episode-end, seed, origin, fps,
// last-action, last-acted-by (you, random, teacher), info, observation, obs-<label>.
import { formatNumber } from "../../lib/format";
import { labelledObservation } from "../../lib/play/observation";
import type { ActedBy, Play } from "./usePlay";

const ACTED_BY: Record<ActedBy, string> = { you: "you", random: "the Random agent", teacher: "the teacher" };

function json(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) => (typeof v === "number" && !Number.isInteger(v) ? Number(v.toFixed(4)) : v));
}

export function LivePanel({ play }: { play: Play }) {
  const { view } = play;
  const labelled = labelledObservation(view.observation, view.observationLabels);
  return (
    <section className="panel live" data-testid="live" aria-label="Live">
      <h2>Live</h2>
      <dl className="figures">
        <div><dt>Step</dt><dd data-testid="step-count">{view.step}</dd></div>
        <div><dt>Reward</dt><dd data-testid="reward">{formatNumber(view.reward)}</dd></div>
        <div><dt>Return</dt><dd data-testid="episode-return">{formatNumber(view.episodeReturn)}</dd></div>
        <div><dt>Frames/s</dt><dd data-testid="fps">{play.mode === "paused" ? "–" : play.fps.toFixed(0)}</dd></div>
      </dl>
      <p className="muted">
        <span data-testid="origin">{view.origin}</span>
        {view.seed !== null ? <span hidden data-testid="seed">{view.seed}</span> : null}
        {" · "}control rate {formatNumber(play.rate, 1)}/s
      </p>
      {view.lastAction !== null ? (
        <p className="mono">
          action <span data-testid="last-action">{json(view.lastAction)}</span>
          {view.lastActedBy ? <span className="muted"> by <span data-testid="last-acted-by">{ACTED_BY[view.lastActedBy]}</span></span> : null}
        </p>
      ) : null}
      <details open>
        <summary>info</summary>
        <pre className="mono" data-testid="info">{json(view.info ?? {})}</pre>
      </details>
      {labelled ? (
        <details open>
          <summary>observation</summary>
          <table className="observation" data-testid="observation">
            <tbody>
              {labelled.map((part) => (
                <tr key={part.name}>
                  <th scope="row">{part.name}</th>
                  <td className="mono" data-testid={`obs-${part.name}`}>{part.values.map((v) => formatNumber(v)).join(", ")}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      ) : play.observationMode === "full" && view.observation !== null ? (
        <details open>
          <summary>observation</summary>
          <pre className="mono" data-testid="observation">{json(view.observation)}</pre>
        </details>
      ) : null}
    </section>
  );
}
