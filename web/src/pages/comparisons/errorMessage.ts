// One line for an error of the API client (its `detail`) or any other thrown value.
import type { ApiError } from "../../api/client";

export function errorMessage(error: unknown): string {
  if (typeof error === "object" && error !== null && "detail" in error) return String((error as ApiError).detail);
  return error instanceof Error ? error.message : String(error);
}
