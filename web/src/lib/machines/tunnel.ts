// A machine behind NAT (docs/gpu-machines.md, "Machines behind NAT"): its reverse tunnel's state
// in words, where the platform reaches it, whether the page should keep asking (the machine has
// not connected yet, or its tunnel is down), and the 409 that says the endpoint is off.
import type { ApiError } from "../../api/client";
import type { Machine } from "../../api/machines";
import type { Tone } from "./status";
import { ago } from "./units";

/** How often the list is read again while a tunnel is waiting or down (to show it connect), and
 * while all are connected (to show one drop: the platform notices in three missed keepalives). */
export const TUNNEL_REFRESH_MS = { pending: 3000, connected: 15_000 } as const;

/** The setting an operator sets to turn the tunnel endpoint on. */
export const TUNNEL_SETTINGS = ["PLATFORM_TUNNEL_PORT", "PLATFORM_TUNNEL_ADDRESS"] as const;

export interface TunnelView {
  state: "waiting" | "connected" | "down";
  label: string;
  tone: Tone;
}

type Tunnelled = Pick<Machine, "tunnel">;

/** "Waiting for the machine to connect", "Tunnel connected since 2030-01-01 10:00:00 UTC (5 min ago)",
 * "Tunnel down since ... (2 min ago)"; null for a machine the platform dials itself. */
export function tunnelView(machine: Tunnelled, now: number): TunnelView | null {
  const tunnel = machine.tunnel;
  if (!tunnel) return null;
  const when = `${whenText(tunnel.since)} (${ago(tunnel.since, now)})`;
  switch (tunnel.state) {
    case "waiting":
      return { state: "waiting", label: "Waiting for the machine to connect: run the command on it", tone: "warn" };
    case "connected":
      return { state: "connected", label: `Tunnel connected since ${when}`, tone: "good" };
    default:
      return { state: "down", label: `Tunnel down since ${when}: is the command still running on the machine?`, tone: "bad" };
  }
}

/** A Unix time as the platform writes it in summaries: "2030-01-01 10:00:00 UTC". */
export function whenText(seconds: number): string {
  return `${new Date(seconds * 1000).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** How often the page reads the list again: every 3 s while any machine's tunnel is waiting or
 * down, every 15 s while there are tunnels and all are connected, never without a tunnel (null). */
export function tunnelRefreshMs(machines: readonly Tunnelled[] | null): number | null {
  const tunnels = (machines ?? []).flatMap((m) => (m.tunnel ? [m.tunnel] : []));
  if (tunnels.some((t) => t.state === "waiting" || t.state === "down")) return TUNNEL_REFRESH_MS.pending;
  return tunnels.length ? TUNNEL_REFRESH_MS.connected : null;
}

/** The status reason says the same as the tunnel line (the platform words both): shown once. */
export function reasonRepeatsTunnel(machine: Pick<Machine, "tunnel" | "status_reason">): boolean {
  const reason = (machine.status_reason || "").trim();
  return machine.tunnel != null && (reason === "" || reason.startsWith("tunnel down since") || reason.startsWith("waiting for the machine"));
}

/** Where the platform reaches a tunnelled machine: "root through its tunnel (platform port 40123)". */
export function tunnelRouteText(machine: Pick<Machine, "target">): string {
  return `${machine.target.user} through its tunnel (platform port ${machine.target.port})`;
}

/** The endpoint is off: a 409 from POST /v0/machines/behind-nat. */
export function endpointOff(error: unknown): boolean {
  return (error as Partial<ApiError> | null)?.status === 409;
}
