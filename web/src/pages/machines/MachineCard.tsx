// One machine: its name, where the platform logs in (and through which bastions), its status with
// the reason, its GPUs and the rest of what the last check found; Check again, Remove (asked
// first), and a changed host key's fingerprints with Accept (asked first).
// data-testid: machine-card (data-machine-id), machine-name, machine-address, machine-via,
// machine-status, machine-status-reason, machine-cpus, machine-memory, machine-disk, machine-python,
// machine-git, machine-os, machine-checked, machine-check, machine-remove, machine-progress,
// machine-error, machine-new-experiment (a ready machine: the New experiment form with it picked),
// machine-tunnel (data-state: waiting, connected, down; a machine behind NAT only),
// machine-remove-dialog(-confirm, -cancel), machine-accept-dialog(-confirm,
// -cancel); GpuTable's and HostKeyPanel's.
import { useState } from "react";
import { Link } from "react-router-dom";
import { machines, type Machine } from "../../api/machines";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { errorText } from "../../lib/errors";
import { routeText } from "../../lib/machines/address";
import { progressText, statusView } from "../../lib/machines/status";
import { reasonRepeatsTunnel, tunnelRouteText, tunnelView } from "../../lib/machines/tunnel";
import { ago, bytes, freeOf } from "../../lib/machines/units";
import { GpuTable } from "./GpuTable";
import { HostKeyPanel } from "./HostKeyPanel";
import { useElapsed } from "./useElapsed";

interface Props {
  machine: Machine;
  now: number;
  onChanged: (machine: Machine) => void;
  onRemoved: (machineId: string) => void;
}

type Action = "check" | "accept" | "remove";

export function MachineCard({ machine, now, onChanged, onRemoved }: Props) {
  const [busy, setBusy] = useState<Action | null>(null);
  const [asking, setAsking] = useState<"remove" | "accept" | null>(null);
  const [error, setError] = useState<string | null>(null);
  const seconds = useElapsed(busy === "check" || busy === "accept");
  const status = statusView(machine);
  const tunnel = tunnelView(machine, now);
  const route = tunnel ? { target: tunnelRouteText(machine), via: null } : routeText(machine);
  const reason = tunnel && reasonRepeatsTunnel(machine) ? null : status.reason;
  const facts = machine.facts;
  const known = machine.facts_at > 0;

  async function run(action: Action, work: () => Promise<void>) {
    setBusy(action);
    setError(null);
    try {
      await work();
      setAsking(null);
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(null);
    }
  }

  const check = () => run("check", async () => onChanged(await machines.check(machine.id)));
  const accept = () => run("accept", async () => onChanged(await machines.acceptHostKey(machine.id)));
  const remove = () => run("remove", async () => {
    await machines.remove(machine.id, true); // the dialog says its experiments are cancelled
    onRemoved(machine.id);
  });

  return (
    <article className="machine-card" data-testid="machine-card" data-machine-id={machine.id} aria-labelledby={`machine-${machine.id}`}>
      <header className="machine-head">
        <div>
          <h3 id={`machine-${machine.id}`} data-testid="machine-name">{machine.name}</h3>
          <code data-testid="machine-address">{route.target}</code>
          {route.via ? <span className="muted" data-testid="machine-via"> via {route.via}</span> : null}
        </div>
        <span className={`machine-status tone-${status.tone}`} data-testid="machine-status">{status.label}</span>
      </header>
      {tunnel ? (
        <p className={`machine-tunnel tone-${tunnel.tone}`} data-testid="machine-tunnel" data-state={tunnel.state}>
          <span className="muted">Behind NAT:</span> {tunnel.label}
        </p>
      ) : null}
      {reason ? <p className={status.tone === "bad" ? "error" : "machine-reason"} data-testid="machine-status-reason">{reason}</p> : null}
      {machine.status === "host key changed" ? (
        <HostKeyPanel machine={machine} busy={busy !== null} onAccept={() => { setError(null); setAsking("accept"); }} />
      ) : null}
      {known ? (
        <>
          <GpuTable facts={facts} />
          <dl className="machine-facts">
            <dt>CPUs</dt><dd data-testid="machine-cpus">{facts.cpus || "–"}</dd>
            <dt>Memory</dt><dd data-testid="machine-memory">{facts.memory_total_bytes ? `${bytes(facts.memory_total_bytes)} (${bytes(facts.memory_available_bytes)} available)` : "–"}</dd>
            <dt>Disk</dt><dd data-testid="machine-disk">{freeOf(facts.disk_free_bytes, facts.disk_total_bytes)}</dd>
            <dt>Python</dt><dd data-testid="machine-python">{facts.python || "not found"}</dd>
            <dt>git</dt><dd data-testid="machine-git">{facts.git || "not found"}</dd>
            <dt>System</dt><dd data-testid="machine-os">{facts.os || "–"}</dd>
          </dl>
        </>
      ) : <p className="muted">Nothing read from it yet.</p>}
      <p className="muted machine-checked" data-testid="machine-checked">
        Checked {ago(machine.checked_at, now)}
        {known && machine.facts_at < machine.checked_at ? `; what is shown was read ${ago(machine.facts_at, now)}` : ""}
      </p>
      <div className="machine-actions">
        <button type="button" data-testid="machine-check" disabled={busy !== null} onClick={check}>
          {busy === "check" ? "Checking…" : "Check again"}
        </button>
        <button type="button" className="danger-outline" data-testid="machine-remove" disabled={busy !== null}
          onClick={() => { setError(null); setAsking("remove"); }}>Remove</button>
        {machine.status === "ready" ? (
          <Link to={`/experiments/new?machine=${encodeURIComponent(machine.id)}`} data-testid="machine-new-experiment">
            New experiment on this machine
          </Link>
        ) : null}
        {busy === "check" || busy === "accept" ? (
          <span className="muted" role="status" data-testid="machine-progress">{progressText(busy, seconds)}</span>
        ) : null}
      </div>
      {error && asking === null ? <p className="error" role="alert" data-testid="machine-error">{error}</p> : null}
      <ConfirmDialog open={asking === "remove"} title={`Remove ${machine.name}?`} confirmLabel="Remove" busyLabel="Removing…"
        busy={busy === "remove"} error={asking === "remove" ? error : null} testId="machine-remove-dialog"
        onConfirm={remove} onCancel={() => setAsking(null)}>
        <p>The platform forgets <strong>{machine.name}</strong> (<code>{route.target}</code>) and its pinned host key. Its queued and running experiments, if any, are cancelled (their processes stopped); ended ones stay with their logs. Nothing else on the machine is touched; remove the platform's key from its <code>authorized_keys</code> yourself if you want it gone there too.</p>
      </ConfirmDialog>
      <ConfirmDialog open={asking === "accept"} title="Accept the new host key?" confirmLabel="Accept the new host key"
        busyLabel="Accepting…" busy={busy === "accept"} error={asking === "accept" ? error : null} testId="machine-accept-dialog"
        onConfirm={accept} onCancel={() => setAsking(null)}>
        <p>
          The platform will trust the key <strong>{machine.name}</strong> presents now instead of the pinned one, and connect
          to it with your team's work from then on. Accept it only if you know why it changed (the machine was reinstalled or
          replaced) and its fingerprint matches the one the machine itself shows.
        </p>
      </ConfirmDialog>
    </article>
  );
}
