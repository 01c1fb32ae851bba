// Training runs (issue 36, docs/training.md "The API"): `/v0/runs` through the typed client.
// A refusal throws the gateway's ApiError; a 401 sends the app back to sign-in, as every call does.
import { api, must, type Schemas } from "./client";

export type Run = Schemas["RunPublic"];
export type RunMetrics = Schemas["RunMetricsPublic"];

export interface RunFilters {
  tag?: string;
  group?: string;
  experiment_id?: string;
}

const byId = (runId: string) => ({ params: { path: { run_id: runId } } });

export const runs = {
  list: async (filters: RunFilters = {}) => {
    const query = Object.fromEntries(Object.entries(filters).filter(([, v]) => v)) as RunFilters;
    return (await must(api.GET("/v0/runs", { params: { query: { ...query, limit: 1000 } } }))).data;
  },
  get: (runId: string) => must(api.GET("/v0/runs/{run_id}", byId(runId))),
  /** Every series of the run (or `names`), at most `maxPoints` points each. */
  metrics: (runId: string, names?: string[], maxPoints = 2000) => must(api.GET("/v0/runs/{run_id}/metrics", {
    params: { path: { run_id: runId }, query: { ...(names ? { names: names.join(",") } : {}), max_points: maxPoints } },
  })),
};
