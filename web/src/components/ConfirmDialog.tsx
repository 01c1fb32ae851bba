// A modal question before something that cannot be undone (revoking a token, removing a member,
// removing a machine, accepting a changed host key, cancelling an experiment).
import { type ReactNode, useEffect, useRef } from "react";
import "./confirmDialog.css";

interface Props {
  open: boolean;
  title: string;
  confirmLabel: string;
  /** the button that closes the question (default "Cancel") */
  cancelLabel?: string;
  busyLabel: string;
  busy: boolean;
  error: string | null;
  testId: string;
  onConfirm: () => void;
  onCancel: () => void;
  children: ReactNode;
}

export function ConfirmDialog({ open, title, confirmLabel, cancelLabel = "Cancel", busyLabel, busy, error, testId, onConfirm, onCancel, children }: Props) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (open && !element.open) element.showModal();
    if (!open && element.open) element.close();
  }, [open]);
  return (
    <dialog ref={dialog} className="dialog" data-testid={testId} aria-labelledby={`${testId}-title`}
      onCancel={(e) => { e.preventDefault(); onCancel(); }}>
      <h2 id={`${testId}-title`}>{title}</h2>
      {children}
      {error ? <p className="error" role="alert" data-testid={`${testId}-error`}>{error}</p> : null}
      <div className="dialog-buttons">
        <button type="button" data-testid={`${testId}-cancel`} onClick={onCancel} disabled={busy}>{cancelLabel}</button>
        <button type="button" className="danger" data-testid={`${testId}-confirm`} onClick={onConfirm} disabled={busy} autoFocus>
          {busy ? busyLabel : confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
