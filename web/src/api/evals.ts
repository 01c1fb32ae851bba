// Inspect evaluations on the team's machines (issue 32, docs/evals.md): `/v0/evals` through the
// typed client. A refusal throws the gateway's ApiError (a 422 names the field: task, model,
// machine, secrets, packages, ...); a 401 sends the app back to sign-in, as every call does.
import { api, must, type Schemas } from "./client";

export type Eval = Schemas["EvalPublic"];
export type EvalDetail = Schemas["EvalDetailPublic"];
export type EvalCreate = Schemas["EvalCreate"];
export type EvalSample = Schemas["EvalSamplePublic"];
export type EvalScore = Schemas["EvalScorePublic"];
export type EvalMetric = Schemas["EvalMetricPublic"];
export type EvalStatus = Eval["status"];

const byId = (evalId: string) => ({ params: { path: { eval_id: evalId } } });

export const evals = {
  list: async () => (await must(api.GET("/v0/evals"))).evals,
  get: (evalId: string) => must(api.GET("/v0/evals/{eval_id}", byId(evalId))),
  /** Checks the task against the machine and starts its experiment before answering (seconds). */
  create: (body: EvalCreate) => must(api.POST("/v0/evals", { body })),
  cancel: (evalId: string) => must(api.POST("/v0/evals/{eval_id}/cancel", byId(evalId))),
};
