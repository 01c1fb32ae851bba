// Where the platform logs in, as a person would write it: "root@203.0.113.7:22045", IPv6 in
// brackets, and the bastions on the way ("via ops@bastion:2200").
import type { Machine, SshHop } from "../../api/machines";

/** One hop: "user@host:port" ("root@[2001:db8::1]:22" for IPv6). */
export function hopText(hop: SshHop): string {
  const host = hop.host.includes(":") ? `[${hop.host}]` : hop.host;
  return `${hop.user}@${host}:${hop.port}`;
}

/** The machine's hop and its bastions: "root@10.0.0.5:22 via ops@bastion:2200, b@c:22". */
export function routeText(machine: Pick<Machine, "target" | "jumps">): { target: string; via: string | null } {
  const jumps = machine.jumps ?? [];
  return { target: hopText(machine.target), via: jumps.length ? jumps.map(hopText).join(", ") : null };
}
