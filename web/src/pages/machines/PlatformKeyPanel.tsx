// Step 1 of adding a machine: the platform's public key, its fingerprint, the authorized_keys line
// to add with a Copy button, and a one-liner that appends it on the machine.
// data-testid: machines-key, machines-key-fingerprint, machines-key-line, machines-key-copy(-done),
// machines-key-append, machines-key-append-copy(-done), machines-key-error.
import { useRef } from "react";
import type { SshKey } from "../../api/machines";
import { CopyButton } from "../../components/CopyButton";
import { appendKeyCommand } from "../../lib/machines/sshHints";

interface Props {
  sshKey: SshKey | null;
  error: string | null;
}

export function PlatformKeyPanel({ sshKey, error }: Props) {
  const line = useRef<HTMLInputElement>(null);
  const append = useRef<HTMLInputElement>(null);
  return (
    <section className="machines-panel" data-testid="machines-key" aria-labelledby="machines-key-title">
      <h2 id="machines-key-title">1. Give the machine the platform's key</h2>
      {error ? <p className="error" role="alert" data-testid="machines-key-error">The platform's key could not be read: {error}</p> : null}
      {!sshKey && !error ? <p className="muted">Loading the platform's key…</p> : null}
      {sshKey ? (
        <>
          <p>
            The platform logs in with its own SSH key only (fingerprint{" "}
            <code data-testid="machines-key-fingerprint">{sshKey.fingerprint}</code>). Add this line to{" "}
            <code>~/.ssh/authorized_keys</code> of the user you log in as:
          </p>
          <div className="copy-row">
            <label className="sr-only" htmlFor="machines-key-line">The authorized_keys line</label>
            <input id="machines-key-line" ref={line} data-testid="machines-key-line" readOnly value={sshKey.authorized_keys_line}
              spellCheck={false} onFocus={(e) => e.currentTarget.select()} />
            <CopyButton text={sshKey.authorized_keys_line} testId="machines-key-copy" label="Copy the authorized_keys line"
              onRefused={() => line.current?.select()} />
          </div>
          <p className="muted">Or run this on the machine, as that user:</p>
          <div className="copy-row">
            <label className="sr-only" htmlFor="machines-key-append">The command that adds the key</label>
            <input id="machines-key-append" ref={append} data-testid="machines-key-append" readOnly
              value={appendKeyCommand(sshKey.authorized_keys_line)} spellCheck={false} onFocus={(e) => e.currentTarget.select()} />
            <CopyButton text={appendKeyCommand(sshKey.authorized_keys_line)} testId="machines-key-append-copy"
              label="Copy the command that adds the key" onRefused={() => append.current?.select()} />
          </div>
        </>
      ) : null}
    </section>
  );
}
