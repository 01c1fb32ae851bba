// The users' GPU machines (issue 31): `/v0/machines` through the typed client. A refusal throws
// the gateway's ApiError (a 422 names the field and says what to paste instead); a 401 sends the
// app back to sign-in, as every call does.
import { api, apiError, must, type Schemas } from "./client";

export type Machine = Schemas["MachinePublic"];
export type MachineFacts = Schemas["MachineFactsPublic"];
export type MachineGpu = Schemas["GpuPublic"];
export type GpuProcess = Schemas["GpuProcessPublic"];
export type SshHop = Schemas["SshHopPublic"];
export type SshKey = Schemas["SshKeyPublic"];
export type MachineStatus = Machine["status"];
export type Tunnel = Schemas["TunnelPublic"];
export type MachineBehindNat = Schemas["MachineBehindNatCreated"];

const byId = (machineId: string) => ({ params: { path: { machine_id: machineId } } });

export const machines = {
  sshKey: () => must(api.GET("/v0/machines/ssh-key")),
  list: async () => (await must(api.GET("/v0/machines"))).machines,
  add: (ssh: string, name: string) => must(api.POST("/v0/machines", { body: { ssh, name } })),
  /** A machine behind NAT: the machine (its tunnel waiting) and the command to run on it, shown only here. */
  addBehindNat: (name: string, user: string, sshPort: number) =>
    must(api.POST("/v0/machines/behind-nat", { body: { name, user, ssh_port: sshPort } })),
  check: (machineId: string) => must(api.POST("/v0/machines/{machine_id}/check", byId(machineId))),
  acceptHostKey: (machineId: string) => must(api.POST("/v0/machines/{machine_id}/accept-host-key", byId(machineId))),
  /** Without `stopExperiments`, a machine whose experiments have not ended is refused (409 naming them). */
  remove: async (machineId: string, stopExperiments: boolean) => {
    const { error, response } = await api.DELETE("/v0/machines/{machine_id}",
      { params: { path: { machine_id: machineId }, query: { stop_experiments: stopExperiments } } });
    if (!response.ok) throw apiError(response, error);
  },
};
