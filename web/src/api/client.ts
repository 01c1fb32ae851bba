// The typed REST client. Its types come from schema.d.ts, generated from the gateway's OpenAPI
// document (`make gen-web`); nothing here is written by hand twice.
import createClient from "openapi-fetch";
import { savedToken, tokenRefused } from "../lib/auth/token";
import type { components, paths } from "./schema";

export type Schemas = components["schemas"];

export const api = createClient<paths>({ baseUrl: "" });

// Every call carries the signed-in token (lib/auth/token.ts), when there is one; a 401 to a call
// that carried it is announced, so the app goes back to the sign-in page with the reason.
api.use({
  onRequest({ request }) {
    const token = savedToken();
    if (token && !request.headers.has("Authorization")) request.headers.set("Authorization", `Bearer ${token}`);
    return request;
  },
  onResponse({ request, response }) {
    const token = savedToken();
    if (response.status === 401 && token !== null && request.headers.get("Authorization") === `Bearer ${token}`) {
      tokenRefused();
    }
    return response;
  },
});

/** The gateway's error body, `{detail, code, field?, log_tail?}`. */
export interface ApiError {
  status: number;
  detail: string;
  code: string;
  field?: string | null;
  log_tail?: string | null;
}

/** An `ApiError` from a failed openapi-fetch answer (the body the gateway sent, or what is known). */
export function apiError(response: Response, body: unknown): ApiError {
  const fields = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
  const detail = typeof fields.detail === "string" ? fields.detail : `${response.status} ${response.statusText}`;
  return {
    status: response.status,
    detail,
    code: typeof fields.code === "string" ? fields.code : "unknown",
    field: typeof fields.field === "string" ? fields.field : null,
    log_tail: typeof fields.log_tail === "string" ? fields.log_tail : null,
  };
}

/** Data of an openapi-fetch result, or throws its `ApiError`. */
export async function must<T>(result: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await result;
  if (!response.ok || data === undefined) throw apiError(response, error);
  return data;
}
