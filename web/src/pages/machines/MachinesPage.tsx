// The Machines page (/machines): the user's own GPU machines over SSH (docs/gpu-machines.md).
// The platform's key to add on a machine, the form that adds one from the SSH command its
// provider shows, and the team's machines with their status, GPUs and what the last check found.
// data-testid: machines-page, machines-list, machines-empty, machines-error, machines-retry;
// PlatformKeyPanel's, AddMachineForm's, AddNatMachineForm's and MachineCard's. While a machine
// behind NAT waits for its tunnel (or the tunnel is down) the list is read again every 3 s, so
// the card turns ready when the machine connects, without a reload; every 15 s while all tunnels
// are up, so a drop shows too.
import { useCallback, useEffect, useState } from "react";
import { machines, type Machine, type SshKey } from "../../api/machines";
import { errorText } from "../../lib/errors";
import { MachineCard } from "./MachineCard";
import { AddMachineForm } from "./AddMachineForm";
import { AddNatMachineForm } from "./AddNatMachineForm";
import { tunnelRefreshMs } from "../../lib/machines/tunnel";
import { PlatformKeyPanel } from "./PlatformKeyPanel";
import { useNow } from "./useElapsed";
import "./machines.css";

export function MachinesPage() {
  const [sshKey, setSshKey] = useState<SshKey | null>(null);
  const [keyError, setKeyError] = useState<string | null>(null);
  const [list, setList] = useState<Machine[] | null>(null);
  const [listError, setListError] = useState<string | null>(null);
  const now = useNow();

  const load = useCallback(async () => {
    setListError(null);
    setKeyError(null);
    const [key, listed] = await Promise.allSettled([machines.sshKey(), machines.list()]);
    if (key.status === "fulfilled") setSshKey(key.value);
    else setKeyError(errorText(key.reason));
    if (listed.status === "fulfilled") setList(listed.value);
    else setListError(errorText(listed.reason));
  }, []);

  useEffect(() => { void load(); }, [load]);

  const refreshMs = tunnelRefreshMs(list);
  useEffect(() => {
    if (refreshMs === null) return undefined;
    const timer = window.setInterval(() => {
      machines.list().then(setList, () => undefined);  // a missed read is tried again on the next tick
    }, refreshMs);
    return () => window.clearInterval(timer);
  }, [refreshMs]);

  const changed = useCallback((machine: Machine) => {
    setList((listed) => {
      const rows = listed ?? [];
      return rows.some((m) => m.id === machine.id) ? rows.map((m) => (m.id === machine.id ? machine : m)) : [...rows, machine];
    });
  }, []);
  const removed = useCallback((machineId: string) => setList((listed) => (listed ?? []).filter((m) => m.id !== machineId)), []);

  return (
    <div className="machines-page" data-testid="machines-page">
      <header>
        <h1>Machines</h1>
        <p className="muted">
          Your own GPU machines, at any provider, over SSH: the platform logs in with its key and reads what each has.
          Nothing is installed on them.
        </p>
      </header>
      <PlatformKeyPanel sshKey={sshKey} error={keyError} />
      <AddMachineForm onAdded={changed} />
      <AddNatMachineForm onAdded={changed} />
      <section className="machines-panel" aria-labelledby="machines-list-title">
        <h2 id="machines-list-title">Your team's machines</h2>
        {listError ? (
          <div role="alert" data-testid="machines-error">
            <p className="error">The machines could not be listed: {listError}</p>
            <button type="button" data-testid="machines-retry" onClick={() => void load()}>Try again</button>
          </div>
        ) : null}
        {list === null && !listError ? <p className="muted">Loading…</p> : null}
        {list !== null && list.length === 0 ? (
          <p className="machines-empty" data-testid="machines-empty">
            No machine yet. Add the platform's key on one of your machines (step 1), then paste the SSH command you use to
            log in to it (step 2): the platform connects, checks it and lists it here with its GPUs.
          </p>
        ) : null}
        {list?.length ? (
          <div className="machines-list" data-testid="machines-list">
            {list.map((machine) => <MachineCard key={machine.id} machine={machine} now={now} onChanged={changed} onRemoved={removed} />)}
          </div>
        ) : null}
      </section>
    </div>
  );
}
