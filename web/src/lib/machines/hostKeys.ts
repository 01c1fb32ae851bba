// A changed host key, hop by hop: the fingerprint pinned on first use and the one the machine
// presents now, for a person to compare before accepting it.
import type { Machine } from "../../api/machines";

export interface HostKeyChange {
  /** "host:port" of the hop */
  hop: string;
  /** the pinned fingerprint, or null when none was pinned for it */
  pinned: string | null;
  /** the fingerprint presented now, or null when the machine's new key could not be read */
  presented: string | null;
}

/** Each hop whose key changed, in the order the machine lists them. */
export function hostKeyChanges(machine: Pick<Machine, "host_key_fingerprints" | "pending_host_key_fingerprints">): HostKeyChange[] {
  const pinned = machine.host_key_fingerprints ?? {};
  return Object.entries(machine.pending_host_key_fingerprints ?? {}).map(([hop, presented]) => ({
    hop,
    pinned: pinned[hop] || null,
    presented: presented || null,
  }));
}

/** A fingerprint to show: "SHA256:…" as is, or what is known instead. */
export function fingerprintText(fingerprint: string | null, missing: string): string {
  return fingerprint ? fingerprint : missing;
}

/** The `ssh-keygen` line a person runs on the machine (or at the provider's console) to read its
 * host key's fingerprint and compare it with the one presented. */
export const FINGERPRINT_COMMAND = "for k in /etc/ssh/ssh_host_*_key.pub; do ssh-keygen -lf \"$k\"; done";
