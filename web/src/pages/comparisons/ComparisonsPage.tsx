// The Comparisons page (`/comparisons`): every comparison of agents the platform kept
// (`python -m platform_sdk.agents.compare`), newest first; each row opens its detail.
//
// data-testids:
//   comparisons-table, comparison-row-<id>, open-<id> (link to its detail), comparisons-count,
//   comparisons-error, comparisons-empty; in each row the cells env-<id>, agents-<id>,
//   steps-<id>, window-<id>.
import { useEffect, useState } from "react";
import { Link } from "react-router-dom";
import { api, must } from "../../api/client";
import { type ComparisonSummary, comparisonPath, createdText } from "../../lib/comparisons/measures";
import { errorMessage } from "./errorMessage";
import "./comparisons.css";

export function ComparisonsPage() {
  const [comparisons, setComparisons] = useState<ComparisonSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    must(api.GET("/v0/comparisons"))
      .then((body) => { if (live) { setComparisons(body.comparisons); setError(null); } })
      .catch((e: unknown) => { if (live) { setComparisons([]); setError(errorMessage(e)); } });
    return () => { live = false; };
  }, []);

  return (
    <section className="comparisons-page">
      <h1>Comparisons</h1>
      {error && <p className="error" role="alert" data-testid="comparisons-error">{error}</p>}
      {comparisons === null ? (
        <p className="muted">Loading…</p>
      ) : comparisons.length === 0 && !error ? (
        <p className="muted" data-testid="comparisons-empty">
          No comparisons yet. Compare agents from one moment with{" "}
          <code>python -m platform_sdk.agents.compare --env ... --agent NAME=module:function ...</code>
        </p>
      ) : (
        <>
          <p className="muted" data-testid="comparisons-count">
            {comparisons.length} comparison{comparisons.length === 1 ? "" : "s"}
          </p>
          <div className="table-scroll">
            <table className="comparisons-table" data-testid="comparisons-table">
              <thead>
                <tr>
                  <th scope="col">Comparison</th>
                  <th scope="col">Date</th>
                  <th scope="col">Environment</th>
                  <th scope="col">Agents</th>
                  <th scope="col" className="num">Steps</th>
                  <th scope="col" className="num">Window</th>
                </tr>
              </thead>
              <tbody>
                {comparisons.map((c) => (
                  <tr key={c.id} data-testid={`comparison-row-${c.id}`}>
                    <td>
                      <Link to={comparisonPath(c.id)} data-testid={`open-${c.id}`}><code className="nowrap">{c.id}</code></Link>
                    </td>
                    <td className="nowrap">{createdText(c.created)}</td>
                    <td data-testid={`env-${c.id}`}>{c.env ?? "–"}</td>
                    <td data-testid={`agents-${c.id}`}>{(c.agents ?? []).join(", ")}</td>
                    <td className="num" data-testid={`steps-${c.id}`}>{c.steps ?? "–"}</td>
                    <td className="num" data-testid={`window-${c.id}`}>{c.window ?? "–"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
