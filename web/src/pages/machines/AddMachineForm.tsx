// Step 2: paste the SSH command the provider shows (and a name). The platform connects, pins the
// host key and checks the machine before it answers, which takes seconds: the form says so,
// counting. A refusal (422: what to paste instead, an unreachable machine, a refused key; 409:
// added already) shows beside the field it names.
// data-testid: machines-add, machines-add-ssh, machines-add-name, machines-add-submit,
// machines-add-progress, machines-add-error, machines-add-name-error, machines-add-hint.
import { type FormEvent, useState } from "react";
import type { ApiError } from "../../api/client";
import { machines, type Machine } from "../../api/machines";
import { errorText } from "../../lib/errors";
import { EXAMPLE_COMMAND, sshCommandHint } from "../../lib/machines/sshHints";
import { progressText } from "../../lib/machines/status";
import { useElapsed } from "./useElapsed";

interface Props {
  onAdded: (machine: Machine) => void;
}

function fieldOf(error: unknown): "ssh" | "name" {
  return (error as Partial<ApiError>)?.field === "name" ? "name" : "ssh";
}

export function AddMachineForm({ onAdded }: Props) {
  const [ssh, setSsh] = useState("");
  const [name, setName] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ field: "ssh" | "name"; text: string } | null>(null);
  const seconds = useElapsed(busy);
  const hint = sshCommandHint(ssh);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (!ssh.trim()) return setError({ field: "ssh", text: `Paste the SSH command your provider shows, e.g. ${EXAMPLE_COMMAND}` });
    if (hint?.blocks) return setError({ field: "ssh", text: hint.text });
    setBusy(true);
    setError(null);
    try {
      const machine = await machines.add(ssh.trim(), name.trim());
      setSsh("");
      setName("");
      onAdded(machine);
    } catch (e) {
      setError({ field: fieldOf(e), text: errorText(e) });
    } finally {
      setBusy(false);
    }
  }

  const sshError = error?.field === "ssh" ? error.text : null;
  const nameError = error?.field === "name" ? error.text : null;
  return (
    <section className="machines-panel" aria-labelledby="machines-add-title">
      <h2 id="machines-add-title">2. Paste the SSH command</h2>
      <p className="muted">
        The command your provider shows to log in (RunPod's "SSH over exposed TCP", Vast.ai, Lambda, AWS, your own
        server; <code>-J</code> bastions too). <code>-i</code> and port forwardings are ignored: the platform uses its own key.
      </p>
      <form className="machines-add" data-testid="machines-add" onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor="machines-add-ssh">SSH command</label>
          <input id="machines-add-ssh" data-testid="machines-add-ssh" value={ssh} placeholder={EXAMPLE_COMMAND}
            spellCheck={false} autoComplete="off" disabled={busy} aria-invalid={sshError ? true : undefined}
            aria-describedby={sshError ? "machines-add-error" : hint ? "machines-add-hint" : undefined}
            onChange={(e) => { setSsh(e.target.value); setError(null); }} />
          {sshError ? <p id="machines-add-error" className="error field-error" role="alert" data-testid="machines-add-error">{sshError}</p> : null}
          {!sshError && hint ? <p id="machines-add-hint" className={hint.blocks ? "error" : "muted"} data-testid="machines-add-hint">{hint.text}</p> : null}
        </div>
        <div className="field field-name">
          <label htmlFor="machines-add-name">Name <span className="muted">(optional)</span></label>
          <input id="machines-add-name" data-testid="machines-add-name" value={name} placeholder="its host" disabled={busy}
            aria-invalid={nameError ? true : undefined} aria-describedby={nameError ? "machines-add-name-error" : undefined}
            onChange={(e) => { setName(e.target.value); setError(null); }} />
          {nameError ? <p id="machines-add-name-error" className="error field-error" role="alert" data-testid="machines-add-name-error">{nameError}</p> : null}
        </div>
        <button type="submit" className="primary" data-testid="machines-add-submit" disabled={busy}>
          {busy ? "Connecting…" : "Add machine"}
        </button>
      </form>
      {busy ? <p className="muted" role="status" data-testid="machines-add-progress">{progressText("add", seconds)}</p> : null}
    </section>
  );
}
