// An eval's samples: one row per sample and epoch (id, epoch, input, target, answer, the chosen
// score (a scorer's dict value split into its parts), tokens, time, error) sorted by that score (its header toggles the order) and filtered by
// one of its values; each row opens its transcript in Inspect's log viewer (a new tab) and, for a
// sample that recorded an episode (platform_sdk/episodes: metadata.recording_id), its replay.
// data-testid: evals-samples, sample-row (data-sample, data-epoch), sample-score, sample-transcript, sample-replay,
// samples-score-pick, samples-filter, samples-sort, samples-shown.
import { useMemo, useState } from "react";
import { Link } from "react-router-dom";
import type { EvalSample } from "../../api/evals";
import { flatSamples, recordingOf, sampleRows, sampleScoreNames, scoreText, scoreValues, type SortOrder } from "../../lib/evals/results";
import { numberText } from "../../lib/evals/status";

const NEXT: Record<SortOrder, SortOrder> = { none: "descending", descending: "ascending", ascending: "none" };
const ARROW: Record<SortOrder, string> = { none: "", descending: " ▼", ascending: " ▲" };

export function SamplesTable({ samples: given }: { samples: EvalSample[] }) {
  const samples = useMemo(() => flatSamples(given), [given]);
  const names = useMemo(() => sampleScoreNames(samples), [samples]);
  const [score, setScore] = useState("");
  const [order, setOrder] = useState<SortOrder>("none");
  const [only, setOnly] = useState("");
  const chosen = names.includes(score) ? score : names[0] ?? "";
  const rows = useMemo(() => sampleRows(samples, chosen, order, only), [samples, chosen, order, only]);
  const values = useMemo(() => scoreValues(samples, chosen), [samples, chosen]);
  return (
    <section className="experiments-panel" data-testid="evals-samples">
      <h2>Samples</h2>
      <div className="evals-samples-tools">
        {names.length > 1 ? (
          <label>Score{" "}
            <select data-testid="samples-score-pick" value={chosen} onChange={(e) => { setScore(e.target.value); setOnly(""); }}>
              {names.map((n) => <option key={n} value={n}>{n}</option>)}
            </select>
          </label>
        ) : null}
        <label>Only {chosen || "score"}{" "}
          <select data-testid="samples-filter" value={only} onChange={(e) => setOnly(e.target.value)}>
            <option value="">any</option>
            {values.map((v) => <option key={v} value={v}>{v}</option>)}
          </select>
        </label>
        <span className="muted" data-testid="samples-shown">{rows.length} of {samples.length} shown</span>
      </div>
      <div className="evals-table-scroll"><table className="experiments-table evals-table">
        <thead>
          <tr>
            <th scope="col">Sample</th><th scope="col">Epoch</th><th scope="col">Input</th><th scope="col">Target</th>
            <th scope="col">Answer</th>
            <th scope="col" aria-sort={order === "none" ? "none" : order}>
              <button type="button" data-testid="samples-sort" onClick={() => setOrder(NEXT[order])}>{chosen || "Score"}{ARROW[order]}</button>
            </th>
            <th scope="col">Tokens</th><th scope="col">Time</th><th scope="col">Error</th><th scope="col">Transcript</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((s) => (
            <tr key={`${s.sample_id}#${s.epoch}`} data-testid="sample-row" data-sample={s.sample_id} data-epoch={s.epoch}>
              <td className="nowrap">{s.sample_id}</td>
              <td className="num">{s.epoch}</td>
              <td><div className="evals-sample-text" title={s.input}>{s.input}</div></td>
              <td><div className="evals-sample-text" title={s.target}>{s.target || "–"}</div></td>
              <td><div className="evals-sample-text" title={s.answer}>{s.answer || "–"}</div></td>
              <td className="score" data-testid="sample-score">{scoreText(s.scores[chosen])}</td>
              <td className="num">{s.tokens}</td>
              <td className="nowrap">{numberText(s.total_time)} s</td>
              <td className="error">{s.error || ""}</td>
              <td className="nowrap">
                <a href={s.transcript_url} target="_blank" rel="noopener" data-testid="sample-transcript">Open</a>
                {recordingOf(s) ? (
                  <>{" · "}<Link to={`/recordings/${encodeURIComponent(recordingOf(s))}`} data-testid="sample-replay">Replay</Link></>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table></div>
    </section>
  );
}
