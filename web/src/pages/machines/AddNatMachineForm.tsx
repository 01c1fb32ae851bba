// "Add a machine behind NAT" (a laptop, WSL, a box without a public address): a name, the user
// who runs the command and the machine's own SSH port. The platform answers with one command to
// run on the machine, shown once in a box that says it holds a secret, with what it does in plain
// words; the machine's card then says when its tunnel connects. The endpoint off (409) says which
// setting an operator sets; a refused field (422) shows beside it.
// data-testid: machines-nat, machines-nat-name, machines-nat-user, machines-nat-port,
// machines-nat-submit, machines-nat-error, machines-nat-off, machines-nat-name-error,
// machines-nat-user-error, machines-nat-port-error, machines-nat-steps; SecretOnceBox's (prefix "nat").
import { type FormEvent, useState } from "react";
import type { ApiError } from "../../api/client";
import { machines, type Machine, type MachineBehindNat } from "../../api/machines";
import { SecretOnceBox } from "../../components/SecretOnceBox";
import { errorText } from "../../lib/errors";
import { endpointOff, TUNNEL_SETTINGS } from "../../lib/machines/tunnel";

interface Props {
  onAdded: (machine: Machine) => void;
}

type Field = "name" | "user" | "ssh_port";
type Failure = { field: Field | null; text: string; off: boolean };

function fieldOf(error: unknown): Field | null {
  const field = (error as Partial<ApiError>)?.field;
  return field === "name" || field === "user" || field === "ssh_port" ? field : null;
}

export function AddNatMachineForm({ onAdded }: Props) {
  const [name, setName] = useState("");
  const [user, setUser] = useState("");
  const [port, setPort] = useState("22");
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<Failure | null>(null);
  const [added, setAdded] = useState<MachineBehindNat | null>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (!name.trim()) return setFailure({ field: "name", text: "Give the machine a name, e.g. my-laptop.", off: false });
    if (!user.trim()) return setFailure({ field: "user", text: "The user on the machine who runs the command (the platform logs in as them).", off: false });
    const sshPort = Number(port);
    if (!Number.isInteger(sshPort) || sshPort < 1 || sshPort > 65535) {
      return setFailure({ field: "ssh_port", text: "The port of the machine's own sshd, 1 to 65535 (usually 22).", off: false });
    }
    setBusy(true);
    setFailure(null);
    try {
      const answer = await machines.addBehindNat(name.trim(), user.trim(), sshPort);
      setAdded(answer);
      setName("");
      onAdded(answer.machine);
    } catch (e) {
      setFailure({ field: fieldOf(e), text: errorText(e), off: endpointOff(e) });
    } finally {
      setBusy(false);
    }
  }

  const beside = (field: Field) => (failure?.field === field ? failure.text : null);
  const fieldProps = (field: Field, testId: string) => ({
    id: testId, "data-testid": testId, disabled: busy, autoComplete: "off", spellCheck: false,
    "aria-invalid": beside(field) ? true : undefined, "aria-describedby": beside(field) ? `${testId}-error` : undefined,
  });
  const fieldError = (field: Field, testId: string) => (beside(field) ? (
    <p id={`${testId}-error`} className="error field-error" role="alert" data-testid={`${testId}-error`}>{beside(field)}</p>
  ) : null);

  return (
    <section className="machines-panel" data-testid="machines-nat" aria-labelledby="machines-nat-title">
      <h2 id="machines-nat-title">Or add a machine behind NAT</h2>
      <p className="muted">
        A laptop, WSL or a box without a public address, which the platform cannot dial: it dials the platform instead.
        You get one command to run on it; the card below says when it has connected.
      </p>
      <form className="machines-add" onSubmit={submit} noValidate>
        <div className="field field-name">
          <label htmlFor="machines-nat-name">Name</label>
          <input {...fieldProps("name", "machines-nat-name")} value={name} placeholder="my-laptop"
            onChange={(e) => { setName(e.target.value); setFailure(null); }} />
          {fieldError("name", "machines-nat-name")}
        </div>
        <div className="field field-name">
          <label htmlFor="machines-nat-user">User on the machine</label>
          <input {...fieldProps("user", "machines-nat-user")} value={user} placeholder="ubuntu"
            onChange={(e) => { setUser(e.target.value); setFailure(null); }} />
          {fieldError("user", "machines-nat-user")}
        </div>
        <div className="field field-port">
          <label htmlFor="machines-nat-port">Its SSH port</label>
          <input {...fieldProps("ssh_port", "machines-nat-port")} value={port} inputMode="numeric"
            onChange={(e) => { setPort(e.target.value); setFailure(null); }} />
          {fieldError("ssh_port", "machines-nat-port")}
        </div>
        <button type="submit" className="primary" data-testid="machines-nat-submit" disabled={busy}>
          {busy ? "Adding…" : "Get the command"}
        </button>
      </form>
      {failure && failure.field === null ? (
        <div className="error" role="alert" data-testid="machines-nat-error">
          {failure.off ? null : <p>{failure.text}</p>}
          {failure.off ? (
            <p data-testid="machines-nat-off">
              The platform's tunnel endpoint is off. An operator turns it on by setting <code>{TUNNEL_SETTINGS[0]}</code> (the
              port machines dial) and <code>{TUNNEL_SETTINGS[1]}</code> (the address they reach the platform at), then
              restarting the machines service.
            </p>
          ) : null}
        </div>
      ) : null}
      {added ? (
        <SecretOnceBox secret={added.command} prefix="nat" label="The command to run on the machine" multiline
          onDone={() => setAdded(null)}>
          <strong>{added.machine.name}</strong> was added. Run this command on it, as <code>{added.machine.target.user}</code>,
          and leave it running (in <code>tmux</code>, or with <code>nohup … &amp;</code>). It holds the machine's own tunnel
          key, a secret: copy it now,
        </SecretOnceBox>
      ) : null}
      {added ? (
        <div className="machines-nat-steps" data-testid="machines-nat-steps">
          <p>What the command does, on the machine:</p>
          <ol>
            <li>saves the tunnel key and the platform's host key under <code>~/.ssh/simulusion-tunnel-{added.machine.id}</code> (only you can read them);</li>
            <li>adds the platform's key to <code>~/.ssh/authorized_keys</code>, so the platform can log in through the tunnel;</li>
            <li>opens a tunnel to the platform with <code>ssh</code> and keeps it open, opening it again after a dropped connection. The tunnel only forwards the platform to this machine's SSH port; it gives nobody a shell on the platform.</li>
          </ol>
          <p className="muted">Lost the command? Remove the machine and add it again: the platform never shows it twice.</p>
        </div>
      ) : null}
    </section>
  );
}
