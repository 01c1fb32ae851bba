// An error of any kind (ApiError, StreamError, Error, text) as one line for the page.

export function errorText(error: unknown): string {
  if (typeof error === "object" && error !== null && "detail" in error) return String((error as { detail: unknown }).detail);
  if (error instanceof Error) return error.message;
  return String(error);
}
