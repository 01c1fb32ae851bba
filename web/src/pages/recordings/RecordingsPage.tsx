// The Recordings page (`/recordings?env_id=&life=&session_id=`): every recording the platform
// kept, newest first, filtered by environment, life and session (the filters live in the URL);
// each row opens its replay, downloads its archive or deletes it after a confirmation. The
// archive is fetched with the signed-in token and saved (lib/download.ts): its link keeps the
// archive's URL, but a click does not follow it, since a plain link cannot carry a bearer token.
//
// data-testids:
//   recordings-table, recording-row-<id>, open-<id> (link to the replay), archive-<id> (the .tar
//   link), archive-error, delete-<id>, delete-dialog, confirm-delete, cancel-delete, filter-env (select),
//   filter-life, filter-session (text), filter-clear, recordings-count, recordings-error,
//   recordings-empty; in each row the cells env-<id>, episodes-<id>, steps-<id> (every step
//   written so far), return-<id>, life-<id>, status-<id>, snapshots-<id>, and in-progress-<id> (the
//   episode being recorded: data-episode, data-steps). While a recording records, or while the
//   session filter matches no recording yet, the list is read again every few seconds; below the table the team's newest saved snapshots
//   (whichever session saved them: SavedSnapshotsTable's) and recordings-snapshots-link.
import { useCallback, useEffect, useMemo, useState } from "react";
import { Link, useSearchParams } from "react-router-dom";
import { api, type ApiError, apiError, must } from "../../api/client";
import { downloadWithToken } from "../../lib/download";
import { formatNumber } from "../../lib/format";
import { SavedSnapshotsTable } from "../snapshots/SavedSnapshotsTable";
import { DeleteRecordingDialog } from "./DeleteRecordingDialog";
import { FILTER_NAMES, type Filters, RecordingFilters } from "./RecordingFilters";
import {
  createdAt, deletable, lifeName, openEpisode, type RecordingSummary, recordingId, stepsSoFar, totalReturn,
} from "./recordingFields";
import "./recordings.css";

const SAVED_SNAPSHOTS_SHOWN = 10; // the newest; the Saved snapshots page lists them all
const RECORDING_POLL_MS = 3000; // how often the list is read again while a recording records

function filtersOf(params: URLSearchParams): Filters {
  return { env_id: params.get("env_id") ?? "", life: params.get("life") ?? "", session_id: params.get("session_id") ?? "" };
}

function message(error: unknown): string {
  if (typeof error === "object" && error !== null && "detail" in error) return String((error as ApiError).detail);
  return error instanceof Error ? error.message : String(error);
}

export function RecordingsPage() {
  const [params, setParams] = useSearchParams();
  const filters = useMemo(() => filtersOf(params), [params]);
  const [recordings, setRecordings] = useState<RecordingSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [envIds, setEnvIds] = useState<string[]>([]);
  const [reload, setReload] = useState(0);
  const [toDelete, setToDelete] = useState<string | null>(null);
  const [deleting, setDeleting] = useState(false);
  const [deleteError, setDeleteError] = useState<string | null>(null);
  const [archiving, setArchiving] = useState<string | null>(null);
  const [archiveError, setArchiveError] = useState<string | null>(null);

  const downloadArchive = useCallback(async (id: string) => {
    setArchiving(id);
    setArchiveError(null);
    try {
      await downloadWithToken(archiveUrl(id), `${id}.tar`);
    } catch (e) {
      setArchiveError(`The archive of ${id} could not be downloaded: ${message(e)}`);
    } finally {
      setArchiving(null);
    }
  }, []);

  const setFilters = useCallback((next: Filters) => {
    const search = new URLSearchParams();
    for (const name of FILTER_NAMES) if (next[name]) search.set(name, next[name]);
    setParams(search, { replace: true });
  }, [setParams]);

  useEffect(() => {
    let live = true;
    must(api.GET("/v0/envs"))
      .then((envs) => { if (live) setEnvIds(envs.data.map((e) => e.id).sort()); })
      .catch(() => { /* the filter then lists only the environments of the recordings shown */ });
    return () => { live = false; };
  }, []);

  useEffect(() => {
    let live = true;
    const query = {
      env_id: filters.env_id || undefined,
      life: filters.life || undefined,
      session_id: filters.session_id || undefined,
    };
    must(api.GET("/v0/recordings", { params: { query } }))
      .then((body) => { if (live) { setRecordings(body.data); setError(null); } })
      .catch((e: unknown) => { if (live) { setRecordings([]); setError(message(e)); } });
    return () => { live = false; };
  }, [filters, reload]);

  // A recording in progress grows: read the list again while one is listed, and while the list
  // is filtered to a session with no recording yet (the recorder creates it with the session's
  // first steps, which the page may be opened before).
  const recording = recordings?.some((r) => r.status === "recording") ?? false;
  const awaitingSession = Boolean(filters.session_id) && recordings !== null && recordings.length === 0 && !error;
  useEffect(() => {
    if (!recording && !awaitingSession) return;
    const timer = window.setTimeout(() => setReload((n) => n + 1), RECORDING_POLL_MS);
    return () => window.clearTimeout(timer);
  }, [recording, awaitingSession, recordings]);

  const knownEnvs = useMemo(() => {
    const ids = new Set(envIds);
    for (const r of recordings ?? []) if (r.env_id) ids.add(r.env_id);
    return [...ids].sort();
  }, [envIds, recordings]);

  const confirmDelete = async () => {
    if (toDelete === null) return;
    setDeleting(true);
    setDeleteError(null);
    try {
      const { error: body, response } = await api.DELETE("/v0/recordings/{recording_id}", {
        params: { path: { recording_id: toDelete } },
      });
      if (!response.ok) throw apiError(response, body);
      setToDelete(null);
      setReload((n) => n + 1);
    } catch (e) {
      setDeleteError(message(e));
    } finally {
      setDeleting(false);
    }
  };

  return (
    <section className="recordings-page">
      <h1>Recordings</h1>
      <RecordingFilters filters={filters} envIds={knownEnvs} onChange={setFilters} />
      {error && <p className="error" role="alert" data-testid="recordings-error">{error}</p>}
      {archiveError && <p className="error" role="alert" data-testid="archive-error">{archiveError}</p>}
      {recordings === null ? (
        <p className="muted">Loading…</p>
      ) : recordings.length === 0 && !error ? (
        <p className="muted" data-testid="recordings-empty">
          No recordings{filters.env_id || filters.life || filters.session_id ? " match these filters" : " yet"}.
          {awaitingSession
            ? " A recorded session's recording appears here with its first steps; this list is read again every few seconds."
            : <> Start a session with recording on (the Options dialog, or <code>platform_sdk.connect(..., record=True)</code>).</>}
        </p>
      ) : (
        <>
          <p className="muted" data-testid="recordings-count">{recordings.length} recording{recordings.length === 1 ? "" : "s"}</p>
          <div className="table-scroll">
            <table className="recordings-table" data-testid="recordings-table">
              <thead>
                <tr>
                  <th scope="col">Recording</th>
                  <th scope="col">Environment</th>
                  <th scope="col">Date</th>
                  <th scope="col" className="num">Episodes</th>
                  <th scope="col" className="num">Steps</th>
                  <th scope="col" className="num">Return</th>
                  <th scope="col">Life</th>
                  <th scope="col">Status</th>
                  <th scope="col">Saved snapshots</th>
                  <th scope="col"><span className="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {recordings.map((r) => <RecordingRow key={recordingId(r)} recording={r}
                  archiving={archiving === recordingId(r)} onArchive={(id) => void downloadArchive(id)} onDelete={(id) => {
                    setDeleteError(null);
                    setToDelete(id);
                  }} />)}
              </tbody>
            </table>
          </div>
        </>
      )}
      <section className="saved-snapshots-section" aria-labelledby="recordings-saved-snapshots">
        <h2 id="recordings-saved-snapshots">
          Saved snapshots <Link to="/snapshots" data-testid="recordings-snapshots-link">all saved snapshots</Link>
        </h2>
        <SavedSnapshotsTable envId={filters.env_id} record={false} limit={SAVED_SNAPSHOTS_SHOWN} />
      </section>
      <DeleteRecordingDialog recordingId={toDelete} busy={deleting} error={deleteError}
        onConfirm={() => void confirmDelete()} onCancel={() => setToDelete(null)} />
    </section>
  );
}

function archiveUrl(id: string): string {
  return `/v0/recordings/${encodeURIComponent(id)}/archive`;
}

interface RowProps {
  recording: RecordingSummary;
  archiving: boolean;
  onArchive: (id: string) => void;
  onDelete: (id: string) => void;
}

function RecordingRow({ recording, archiving, onArchive, onDelete }: RowProps) {
  const id = recordingId(recording);
  const life = lifeName(recording);
  const open = openEpisode(recording);
  const snapshots = recording.saved_snapshots ?? [];
  const canDelete = deletable(recording);
  return (
    <tr data-testid={`recording-row-${id}`}>
      <td><Link to={`/recordings/${encodeURIComponent(id)}`} data-testid={`open-${id}`} title="Open its replay"><code className="nowrap">{id}</code></Link></td>
      <td data-testid={`env-${id}`}>{recording.env_id ?? "–"}</td>
      <td className="nowrap">{createdAt(recording)}</td>
      <td className="num" data-testid={`episodes-${id}`}>{recording.episode_count}{open && <span className="muted"> + 1</span>}</td>
      <td className="num" data-testid={`steps-${id}`}>
        {stepsSoFar(recording)?.toLocaleString("en-US") ?? "–"}
        {open && (
          <span className="in-progress" data-testid={`in-progress-${id}`} data-episode={open.index} data-steps={open.length}
            title={`Episode ${open.index} is being recorded: ${open.length} steps so far (its replay shows them)`}>
            {" "}({open.length.toLocaleString("en-US")} in progress)
          </span>
        )}
      </td>
      <td className="num" data-testid={`return-${id}`}>{formatNumber(totalReturn(recording))}</td>
      <td data-testid={`life-${id}`} className="nowrap">{life ?? <span className="muted">–</span>}</td>
      <td data-testid={`status-${id}`}><span className={`status status-${recording.status ?? "unknown"}`}>{recording.status ?? "–"}</span></td>
      <td data-testid={`snapshots-${id}`}>
        {snapshots.length === 0 ? <span className="muted">–</span> : (
          <ul className="snapshot-list">
            {snapshots.map((s) => (
              <li key={s.id} title={`saved snapshot ${s.id}${s.seq != null ? ` at seq ${s.seq}` : ""}`}>
                {s.label ? s.label : <code>{s.id}</code>}
              </li>
            ))}
          </ul>
        )}
      </td>
      <td>
        <div className="row-actions">
        <Link to={`/recordings/${encodeURIComponent(id)}`} className="button-link">Replay</Link>
        <a href={archiveUrl(id)} download={`${id}.tar`} data-testid={`archive-${id}`} aria-busy={archiving}
          className="button-link" title="Download its files as a .tar"
          onClick={(e) => { e.preventDefault(); if (!archiving) onArchive(id); }}>{archiving ? "Archive…" : "Archive"}</a>
        <button type="button" data-testid={`delete-${id}`} disabled={!canDelete} className="danger-outline"
          title={canDelete ? "Delete this recording" : "Still recording: close its session first"}
          onClick={() => onDelete(id)}>
          Delete
        </button>
        </div>
      </td>
    </tr>
  );
}
