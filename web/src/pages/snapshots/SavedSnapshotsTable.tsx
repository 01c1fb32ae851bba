// The team's saved snapshots (GET /v0/snapshots, newest first) as a table: label, environment,
// session, when, size, and Resume, which opens a new session at the snapshot (recorded when
// `record` is on). Shown by the Saved snapshots page and on the Recordings page.
// data-testid: saved-snapshots-table, saved-snapshot-row-<id>, saved-snapshot-env-<id>,
// saved-snapshot-session-<id>, saved-snapshot-size-<id>, saved-snapshot-resume-<id>,
// saved-snapshots-error, saved-snapshots-empty.
import { useEffect, useState } from "react";
import { useNavigate } from "react-router-dom";
import { api, must } from "../../api/client";
import { resumeSnapshot } from "../../components/play/sessions";
import { errorText } from "../../lib/errors";
import { type SavedSnapshot, savedWhen, sizeText } from "../../lib/snapshots/savedSnapshots";
import "./snapshots.css";

interface Props {
  envId: string;
  record: boolean;
  limit?: number;
  onListed?: (snapshots: SavedSnapshot[]) => void;
}

export function SavedSnapshotsTable({ envId, record, limit, onListed }: Props) {
  const navigate = useNavigate();
  const [snapshots, setSnapshots] = useState<SavedSnapshot[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [resuming, setResuming] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    must(api.GET("/v0/snapshots", { params: { query: { env_id: envId || undefined } } }))
      .then((body) => {
        if (!live) return;
        setSnapshots(body.data);
        setError(null);
        onListed?.(body.data);
      })
      .catch((e: unknown) => { if (live) { setSnapshots([]); setError(errorText(e)); } });
    return () => { live = false; };
  }, [envId, onListed]);

  async function resume(id: string) {
    setResuming(id);
    setError(null);
    try {
      navigate(await resumeSnapshot(id, { record, record_frames: record }));
    } catch (e) {
      setError(errorText(e));
      setResuming(null);
    }
  }

  if (snapshots === null) return <p className="muted">Loading…</p>;
  const shown = limit === undefined ? snapshots : snapshots.slice(0, limit);
  return (
    <>
      {error ? <p className="error" role="alert" data-testid="saved-snapshots-error">{error}</p> : null}
      {snapshots.length === 0 && !error ? (
        <p className="muted" data-testid="saved-snapshots-empty">
          No saved snapshots{envId ? ` of ${envId}` : ""} yet. Save one from a session's Snapshots panel, or
          with <code>env.save_snapshot("label")</code>.
        </p>
      ) : null}
      {shown.length > 0 ? (
        <div className="table-scroll">
          <table className="saved-snapshots-table" data-testid="saved-snapshots-table">
            <thead>
              <tr>
                <th scope="col">Label</th><th scope="col">Environment</th><th scope="col">Session</th>
                <th scope="col">Saved</th><th scope="col" className="num">Size</th>
                <th scope="col"><span className="visually-hidden">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {shown.map((s) => (
                <tr key={s.id} data-testid={`saved-snapshot-row-${s.id}`}>
                  <td>{s.label ? <strong>{s.label}</strong> : <span className="muted">(no label)</span>} <code className="muted">{s.id}</code></td>
                  <td data-testid={`saved-snapshot-env-${s.id}`}>{s.env_id}</td>
                  <td data-testid={`saved-snapshot-session-${s.id}`}><code className="nowrap">{s.session_id}</code></td>
                  <td className="nowrap">{savedWhen(s.created_at)}</td>
                  <td className="num" data-testid={`saved-snapshot-size-${s.id}`}>{sizeText(s.size_bytes)}</td>
                  <td>
                    <button type="button" data-testid={`saved-snapshot-resume-${s.id}`} disabled={resuming !== null}
                      onClick={() => void resume(s.id)} aria-label={`Resume ${s.label || s.id} in a new session`}>
                      {resuming === s.id ? "Starting…" : "Resume"}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}
