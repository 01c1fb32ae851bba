// The session's world changes: each timeline entry in words, when it is due and the session
// steps it was applied at so far (refreshed after steps, at most once a second). Hidden for a
// session without a timeline.
// data-testid: world-changes (the panel, data-applied: how many applications so far),
// world-change-<i> (entry i), world-change-status-<i> ("due at session step 3", "applied at
// session step 3").
import { rowStatus } from "../../lib/worldChanges/timeline";
import { useWorldChanges } from "./useWorldChanges";
import type { Play } from "./usePlay";

export function WorldChangesPanel({ play, sessionId }: { play: Play; sessionId: string }) {
  const changes = useWorldChanges(sessionId, play.view);
  if (changes.state === "loading" || changes.state === "none") return null;
  return (
    <section className="panel world-changes" data-testid="world-changes" aria-label="World changes"
      data-applied={changes.state === "ready" ? changes.applied : undefined}>
      <h2>World changes</h2>
      {changes.state === "error" ? <p className="error">{changes.message}</p> : (
        <>
          <p className="muted">The agent is not told of these unless an entry says "reveal".</p>
          <ol className="world-change-list">
            {changes.rows.map((row) => (
              <li key={row.index} data-testid={`world-change-${row.index}`}
                className={row.appliedAt.length > 0 ? "applied" : "due"}>
                <span className="mono">{row.label}</span>
                <span className="muted" data-testid={`world-change-status-${row.index}`}>{rowStatus(row)}</span>
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}
