// Steps in the environment protocol's own binary messages, as the Python SDK sends them: one
// serialized `EnvRequest` out, one `EnvResponse` back, which the gateway passes through without
// reading (no JSON to parse, check or build, no second message for the frame). The answer is
// read here into the same `StreamStepResult` a text step gets, with the frame's JPEG bytes.
//
// The session page uses them for environments whose observation it shows whole and whose frames
// the environment server encodes as JPEG (MuJoCo, DeepMind Control, classic control); image
// observations (Atari, Doom) stay on text steps, which leave the big observation out of the answer.
//
//   const bytes = stepRequestBytes(7, valueFromJson(action, space), { frame: true });
//   socket.send(bytes);  // ... then, for the binary message that answers it:
//   const answer = readStepResponse(new Uint8Array(message.data), labels);
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { EnvRequestSchema, EnvResponseSchema, ErrorCode, type Error as EnvError, StepRequestSchema } from "../gen/simulusion/env/v1/environment_pb";
import type { Value } from "../gen/simulusion/env/v1/values_pb";
import { jsonFromDataMap, jsonFromValue } from "./envValues";
import type { components } from "./schema";

type StepResult = components["schemas"]["StreamStepResult"];
type Labels = StepResult["observation_labels"];

export interface BinaryStepOptions {
  frame?: boolean;
  autoReset?: boolean;
}

/** A step request's bytes: its id (unique on this stream), the action, and what to send back. */
export function stepRequestBytes(id: number, action: Value, options: BinaryStepOptions = {}): Uint8Array {
  const step = create(StepRequestSchema, { action, render: options.frame ?? false, autoReset: options.autoReset ?? false });
  return toBinary(EnvRequestSchema, create(EnvRequestSchema, { id: BigInt(id), command: { case: "step", value: step } }));
}

/** A refusal in a binary answer, as the text answers' `error` says it (HTTP-like status, code). */
export interface BinaryError {
  status: number;
  code: string;
  detail: string;
  logTail: string | null;
}

/** What a binary step's answer holds: the result as a text step's, and the frame's bytes and
 * size; `unreadableFrame` when the frame is not a JPEG (the stream goes back to text steps). */
export type BinaryStepAnswer =
  | { id: number; result: StepResult; jpeg: Uint8Array | null; unreadableFrame: boolean }
  | { id: number; error: BinaryError };

/** The env host's error codes as the gateway's text answers give them (env_commands._error). */
const ERRORS: Partial<Record<ErrorCode, [number, string]>> = {
  [ErrorCode.INVALID_ACTION]: [422, "invalid_action"],
  [ErrorCode.INVALID_ARGUMENT]: [422, "invalid_argument"],
  [ErrorCode.FAILED_PRECONDITION]: [409, "failed_precondition"],
  [ErrorCode.NOT_FOUND]: [404, "not_found"],
  [ErrorCode.UNIMPLEMENTED]: [501, "unimplemented"],
  [ErrorCode.UNAVAILABLE]: [410, "gone"],
  [ErrorCode.SESSION_CLOSED]: [410, "gone"],
  [ErrorCode.UNAUTHENTICATED]: [503, "unavailable"],
  [ErrorCode.PERMISSION_DENIED]: [503, "unavailable"],
};

function binaryError(error: EnvError): BinaryError {
  const [status, code] = ERRORS[error.code] ?? [500, "internal"];
  return { status, code, detail: error.message || `the step failed (${ErrorCode[error.code] ?? error.code})`, logTail: error.logTail || null };
}

function rewardJson(reward: number): number | string {
  if (Number.isFinite(reward)) return reward;
  return Number.isNaN(reward) ? "nan" : reward > 0 ? "inf" : "-inf";
}

/** Reads one binary answer. `labels`: the session's observation labels, which a text step's
 * answer carries and the binary one does not.
 *
 * Throws an `UnsupportedValueError` (envValues.ts) for an observation the browser cannot read. */
export function readStepResponse(bytes: Uint8Array, labels: Labels): BinaryStepAnswer {
  const response = fromBinary(EnvResponseSchema, bytes);
  const id = Number(response.id);
  if (response.error && response.error.code !== ErrorCode.UNSPECIFIED) return { id, error: binaryError(response.error) };
  if (response.result.case !== "step") {
    return { id, error: { status: 502, code: "protocol", detail: `answer ${id} is not a step's (${response.result.case ?? "empty"})`, logTail: null } };
  }
  const step = response.result.value;
  const info = jsonFromDataMap(step.info);
  if (step.autoReset) {
    info.final_obs = jsonFromValue(step.autoReset.finalObservation);
    info.final_info = jsonFromDataMap(step.autoReset.finalInfo);
    if (!(step.terminated || step.truncated)) info.restarted = true;
  }
  const frame = step.frame;
  const jpeg = frame && frame.encoding === "jpeg" ? frame.data : null;
  const result: StepResult = {
    observation: jsonFromValue(step.observation),
    observation_digest: null,
    reward: rewardJson(step.reward),
    terminated: step.terminated,
    truncated: step.truncated,
    info,
    observation_labels: labels,
    frame: frame && jpeg ? { mime: "image/jpeg", width: frame.width, height: frame.height, size: jpeg.byteLength } : null,
    warnings: [...response.warnings],
  };
  return { id, result, jpeg, unreadableFrame: frame !== undefined && jpeg === null };
}
