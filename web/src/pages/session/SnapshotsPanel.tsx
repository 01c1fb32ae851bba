// Snapshots: in-session ones (take, restore while the session lives) and saved ones (a label,
// kept durably; listed by GET /v0/snapshots?session_id=; Resume opens a new session there).
// data-testid: snapshots, snapshot-take, snapshot-list, snapshot-<n>, snapshot-restore-<n>,
// snapshot-restore-time (how long the environment took for the last restore),
// snapshot-label, snapshot-save, snapshot-error, saved-snapshots, saved-snapshot-<id>,
// resume-<id>.
import { type FormEvent, useCallback, useEffect, useState } from "react";
import { useNavigate } from "react-router-dom";
import { api, must, type Schemas } from "../../api/client";
import { resumeSnapshot } from "../../components/play/sessions";
import { errorText } from "../../lib/errors";
import { formatNumber } from "../../lib/format";
import type { Play } from "./usePlay";

interface Props {
  play: Play;
  session: Schemas["SessionPublic"];
}

export function SnapshotsPanel({ play, session }: Props) {
  const navigate = useNavigate();
  const [label, setLabel] = useState("");
  const [saved, setSaved] = useState<Schemas["SavedSnapshotPublic"][]>([]);
  const [error, setError] = useState<string | null>(null);
  const [working, setWorking] = useState(false);
  const ready = play.phase === "ready";

  const refresh = useCallback(async () => {
    const body = await must(api.GET("/v0/snapshots", { params: { query: { session_id: session.id } } }));
    setSaved(body.data);
  }, [session.id]);

  useEffect(() => {
    refresh().catch((e: unknown) => setError(errorText(e)));
  }, [refresh]);

  async function save(event: FormEvent) {
    event.preventDefault();
    setWorking(true);
    setError(null);
    try {
      await play.saveSnapshot(label.trim() || `step ${play.view.step}`);
      setLabel("");
      await refresh();
    } catch (e) {
      setError(errorText(e));
    } finally {
      setWorking(false);
    }
  }

  async function resume(id: string) {
    setWorking(true);
    setError(null);
    try {
      navigate(await resumeSnapshot(id, { record: session.record, record_frames: session.record_frames }));
    } catch (e) {
      setError(errorText(e));
      setWorking(false);
    }
  }

  return (
    <section className="panel snapshots" data-testid="snapshots" aria-label="Snapshots">
      <h2>Snapshots</h2>
      <div className="row">
        <button type="button" data-testid="snapshot-take" disabled={!ready} onClick={() => void play.takeSnapshot()}>Take snapshot</button>
        <span className="muted">restores in this session</span>
      </div>
      {play.snapshots.length > 0 ? (
        <ol className="snapshot-list" data-testid="snapshot-list">
          {play.snapshots.map((s) => (
            <li key={s.handle} data-testid={`snapshot-${s.number}`}>
              <span>#{s.number}: step {s.view.step}, return {formatNumber(s.view.episodeReturn)}</span>
              <button type="button" data-testid={`snapshot-restore-${s.number}`} disabled={!ready}
                onClick={() => void play.restoreSnapshot(s)} aria-label={`Restore snapshot ${s.number}`}>Restore</button>
            </li>
          ))}
        </ol>
      ) : null}
      {play.restoreSeconds !== null ? (
        <p className="muted" data-testid="snapshot-restore-time">
          restored in {play.restoreSeconds < 0.1 ? `${(play.restoreSeconds * 1000).toFixed(1)} ms` : `${play.restoreSeconds.toFixed(2)} s`}
        </p>
      ) : null}
      <form className="row" onSubmit={save}>
        <label className="sr-only" htmlFor="snapshot-label">Label</label>
        <input id="snapshot-label" data-testid="snapshot-label" placeholder="label, e.g. before the jump" value={label}
          onChange={(e) => setLabel(e.target.value)} maxLength={200} />
        <button type="submit" data-testid="snapshot-save" disabled={!ready || working}>Save</button>
      </form>
      {error ? <p className="error" role="alert" data-testid="snapshot-error">{error}</p> : null}
      <h3>Saved</h3>
      <ul className="saved-snapshots" data-testid="saved-snapshots">
        {saved.length === 0 ? <li className="muted">none yet</li> : null}
        {saved.map((s) => (
          <li key={s.id} data-testid={`saved-snapshot-${s.id}`}>
            <span><strong>{s.label || "(no label)"}</strong> <span className="muted">{new Date(s.created_at * 1000).toLocaleTimeString()}</span></span>
            <button type="button" data-testid={`resume-${s.id}`} disabled={working} onClick={() => void resume(s.id)}
              aria-label={`Resume ${s.label || s.id} in a new session`}>Resume</button>
          </li>
        ))}
      </ul>
    </section>
  );
}
