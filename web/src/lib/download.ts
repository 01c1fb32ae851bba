// Downloads that carry the signed-in token. A plain `<a href download>` cannot send an
// Authorization header, so a platform that needs a token would refuse it: the file is fetched
// with `authFetch` into a Blob and saved from an object URL instead.
import { apiError } from "../api/client";
import { authFetch } from "./auth/token";

/** The file name a Content-Disposition header gives (RFC 6266: `filename*=UTF-8''…` first, then
 * `filename=`), without any folder part; `fallback` when it gives none. */
export function filenameFromDisposition(header: string | null, fallback: string): string {
  if (!header) return fallback;
  const extended = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(header);
  let name: string | null = null;
  if (extended) {
    try {
      name = decodeURIComponent(extended[1].trim());
    } catch {
      name = null;
    }
  }
  if (!name) {
    const plain = /filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))/.exec(header);
    if (plain) name = (plain[1] ?? plain[2]).replace(/\\(.)/g, "$1");
  }
  const base = name?.split(/[/\\]/).pop()?.trim();
  return base && base !== "." && base !== ".." ? base : fallback;
}

/** Saves `blob` as a download named `filename` (an object URL clicked, then revoked). */
export function saveBlob(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = filename;
  link.style.display = "none";
  document.body.append(link);
  link.click();
  link.remove();
  // The browser has taken the file once the click's task ran; revoke a little later to be safe.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** GETs `url` with the token and saves the answer (its Content-Disposition's name, else
 * `fallbackName`); throws the gateway's ApiError when it refuses. */
export async function downloadWithToken(url: string, fallbackName: string): Promise<string> {
  const response = await authFetch(url);
  if (!response.ok) {
    let body: unknown = null;
    try {
      body = await response.json();
    } catch {
      body = null;
    }
    throw apiError(response, body);
  }
  const filename = filenameFromDisposition(response.headers.get("Content-Disposition"), fallbackName);
  saveBlob(await response.blob(), filename);
  return filename;
}
