// The Saved snapshots page (`/snapshots?env_id=`): every saved snapshot of the team, whichever
// session saved it (recorded or not), newest first, filtered by environment; Resume opens a new
// session at one, recorded when "Record the new session" is ticked. The API keeps saved
// snapshots without a delete, so the page has none.
// data-testid: snapshots-page, snapshots-filter-env, snapshots-record, snapshots-count; SavedSnapshotsTable's.
import { useCallback, useMemo, useState } from "react";
import { useSearchParams } from "react-router-dom";
import { envChoices, type SavedSnapshot } from "../../lib/snapshots/savedSnapshots";
import { SavedSnapshotsTable } from "./SavedSnapshotsTable";

export function SnapshotsPage() {
  const [params, setParams] = useSearchParams();
  const envId = params.get("env_id") ?? "";
  const [record, setRecord] = useState(false);
  const [all, setAll] = useState<SavedSnapshot[]>([]);
  const [count, setCount] = useState<number | null>(null);
  const listed = useCallback((snapshots: SavedSnapshot[]) => {
    setCount(snapshots.length);
    if (!envId) setAll(snapshots);
  }, [envId]);
  const envs = useMemo(() => envChoices(all, envId), [all, envId]);

  return (
    <section className="snapshots-page" data-testid="snapshots-page">
      <h1>Saved snapshots</h1>
      <p className="muted">Moments saved from any session, recorded or not. Resume one to play on from it in a new session.</p>
      <form className="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          Environment
          <select data-testid="snapshots-filter-env" value={envId}
            onChange={(e) => setParams(e.target.value ? { env_id: e.target.value } : {}, { replace: true })}>
            <option value="">all</option>
            {envs.map((id) => <option key={id} value={id}>{id}</option>)}
          </select>
        </label>
        <label className="inline">
          <input type="checkbox" data-testid="snapshots-record" checked={record} onChange={(e) => setRecord(e.target.checked)} />
          Record the new session
        </label>
      </form>
      {count !== null && count > 0 ? (
        <p className="muted" data-testid="snapshots-count">{count} saved snapshot{count === 1 ? "" : "s"}</p>
      ) : null}
      <SavedSnapshotsTable envId={envId} record={record} onListed={listed} />
    </section>
  );
}
