// A changed host key: each hop's pinned fingerprint beside the one presented now, how to read the
// machine's own, and the button that accepts it (the card asks first).
// data-testid: machine-host-key, machine-host-key-hop, machine-old-fingerprint,
// machine-new-fingerprint, machine-accept-host-key.
import type { Machine } from "../../api/machines";
import { FINGERPRINT_COMMAND, fingerprintText, hostKeyChanges } from "../../lib/machines/hostKeys";

interface Props {
  machine: Machine;
  busy: boolean;
  onAccept: () => void;
}

export function HostKeyPanel({ machine, busy, onAccept }: Props) {
  const changes = hostKeyChanges(machine);
  return (
    <div className="machine-host-key" data-testid="machine-host-key">
      <p>
        <strong>The machine presents another host key than the one pinned when it was added.</strong> Every connection
        is refused until you accept the new one. That is expected after a reinstall or when the provider gave the address
        to another machine; otherwise someone may be in between.
      </p>
      <table>
        <thead><tr><th scope="col">Host</th><th scope="col">Pinned</th><th scope="col">Presented now</th></tr></thead>
        <tbody>
          {changes.map((change) => (
            <tr key={change.hop} data-testid="machine-host-key-hop">
              <td><code>{change.hop}</code></td>
              <td><code data-testid="machine-old-fingerprint">{fingerprintText(change.pinned, "none pinned")}</code></td>
              <td><code data-testid="machine-new-fingerprint">{fingerprintText(change.presented, "could not be read (pinned on the next connection)")}</code></td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="muted">
        Compare with the machine's own, read at your provider's console: <code>{FINGERPRINT_COMMAND}</code>
      </p>
      <button type="button" className="danger" data-testid="machine-accept-host-key" disabled={busy || !changes.length} onClick={onAccept}>
        Accept the new host key
      </button>
    </div>
  );
}
