// Asks before a recording is deleted (its files go; the saved snapshots its session made stay).
import { useEffect, useRef } from "react";

interface Props {
  recordingId: string | null;
  busy: boolean;
  error: string | null;
  onConfirm: () => void;
  onCancel: () => void;
}

export function DeleteRecordingDialog({ recordingId, busy, error, onConfirm, onCancel }: Props) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (recordingId !== null && !element.open) element.showModal();
    if (recordingId === null && element.open) element.close();
  }, [recordingId]);
  return (
    <dialog ref={dialog} className="dialog" data-testid="delete-dialog" aria-labelledby="delete-title"
      onCancel={(e) => { e.preventDefault(); onCancel(); }}>
      <h2 id="delete-title">Delete recording?</h2>
      <p>
        Recording <code>{recordingId}</code> and its episode files will be deleted for good. The snapshots its
        session saved stay.
      </p>
      {error && <p className="error" role="alert">{error}</p>}
      <div className="dialog-buttons">
        <button type="button" data-testid="cancel-delete" onClick={onCancel} disabled={busy}>Cancel</button>
        <button type="button" className="danger" data-testid="confirm-delete" onClick={onConfirm} disabled={busy} autoFocus>
          {busy ? "Deleting…" : "Delete"}
        </button>
      </div>
    </dialog>
  );
}
