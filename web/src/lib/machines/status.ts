// A machine's status in words, with its tone and the reason to show beside it.
import type { Machine } from "../../api/machines";

export type Tone = "good" | "bad" | "warn" | "muted";

export interface StatusView {
  label: string;
  tone: Tone;
  /** why (unreachable, a changed host key), or null */
  reason: string | null;
}

const LABELS: Record<Machine["status"], { label: string; tone: Tone }> = {
  ready: { label: "Ready", tone: "good" },
  unreachable: { label: "Unreachable", tone: "bad" },
  "host key changed": { label: "Host key changed", tone: "warn" },
  unchecked: { label: "Not checked yet", tone: "muted" },
};

export function statusView(machine: Pick<Machine, "status" | "status_reason">): StatusView {
  const known = LABELS[machine.status] ?? { label: machine.status, tone: "muted" as Tone };
  const reason = machine.status === "ready" ? null : (machine.status_reason || "").trim() || null;
  return { ...known, reason };
}

/** What the page says while the platform connects: "Connecting to the machine and checking it… 4 s". */
export function progressText(action: "add" | "check" | "accept", seconds: number): string {
  const doing = {
    add: "Connecting to the machine and checking it",
    check: "Checking the machine",
    accept: "Pinning the new host key and checking the machine",
  }[action];
  return seconds >= 1 ? `${doing}… ${Math.floor(seconds)} s` : `${doing}…`;
}
