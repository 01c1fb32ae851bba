// Experiments on the users' GPU machines (issue 31, docs/gpu-machines.md "5. Experiments"):
// `/v0/experiments` through the typed client, and the URL of an experiment's log stream (a
// WebSocket, followed by lib/experiments/logFollower.ts). A refusal throws the gateway's
// ApiError (a 422 names the field: machine, repository, ref, command, gpus, env); a 401 sends
// the app back to sign-in, as every call does.
import { api, must, type Schemas } from "./client";

export type Experiment = Schemas["ExperimentPublic"];
export type ExperimentCreate = Schemas["ExperimentCreate"];
export type ExperimentLogPage = Schemas["ExperimentLogPublic"];
export type ExperimentStatus = Experiment["status"];

const byId = (experimentId: string) => ({ params: { path: { experiment_id: experimentId } } });

export const experiments = {
  list: async () => (await must(api.GET("/v0/experiments"))).experiments,
  get: (experimentId: string) => must(api.GET("/v0/experiments/{experiment_id}", byId(experimentId))),
  /** Clones, checks out and starts it before answering (seconds); a command that fails at once is a 422. */
  create: (body: ExperimentCreate) => must(api.POST("/v0/experiments", { body })),
  cancel: (experimentId: string) => must(api.POST("/v0/experiments/{experiment_id}/cancel", byId(experimentId))),
};

/** The log stream's URL for the page's origin (ws: or wss: like http: or https:), from byte
 * `offset`, with `?token=` when there is one (a browser cannot set a WebSocket's headers). */
export function logStreamUrl(experimentId: string, offset: number, token: string | null,
                             origin: Location | URL = window.location): string {
  const scheme = origin.protocol === "https:" ? "wss:" : "ws:";
  const query = new URLSearchParams({ offset: String(offset) });
  if (token) query.set("token", token);
  return `${scheme}//${origin.host}/v0/experiments/${encodeURIComponent(experimentId)}/logs/stream?${query}`;
}
