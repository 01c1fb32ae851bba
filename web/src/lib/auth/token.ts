// The token the web app sends (docs/auth.md): kept in this browser's localStorage after sign-in,
// sent as `Authorization: Bearer` on every API call (the typed client's middleware, `authFetch`)
// and as `?token=` on the session's WebSocket, where a browser cannot set headers. A 401 to a
// call that carried it (an expired identity token, a revoked API token) is announced to the
// listeners of `onTokenRefused` (lib/auth/useSignIn.ts), which go back to the sign-in page.

const KEY = "simulusion.token";

/** Where the token is kept; tests pass their own. */
export interface TokenStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

function storage(): TokenStorage | null {
  try {
    return typeof window === "undefined" ? null : window.localStorage;
  } catch {
    return null; // storage refused (a privacy setting): no sign-in survives a reload
  }
}

export function savedToken(store: TokenStorage | null = storage()): string | null {
  const token = store?.getItem(KEY) ?? null;
  return token && token.trim() ? token.trim() : null;
}

export function saveToken(token: string, store: TokenStorage | null = storage()): void {
  store?.setItem(KEY, token.trim());
}

export function forgetToken(store: TokenStorage | null = storage()): void {
  store?.removeItem(KEY);
}

/** `headers` with the saved token's Authorization, when there is one. */
export function withToken(headers: HeadersInit = {}, token: string | null = savedToken()): Headers {
  const result = new Headers(headers);
  if (token && !result.has("Authorization")) result.set("Authorization", `Bearer ${token}`);
  return result;
}

type Listener = () => void;
const refusedListeners = new Set<Listener>();

/** Calls `listener` whenever the platform refuses the saved token (a 401); returns the unsubscribe. */
export function onTokenRefused(listener: Listener): () => void {
  refusedListeners.add(listener);
  return () => { refusedListeners.delete(listener); };
}

/** Tells the listeners that a call carrying the saved token was answered 401. */
export function tokenRefused(): void {
  for (const listener of [...refusedListeners]) listener();
}

/** `fetch` with the saved token (for the calls outside the typed client: frames, previews,
 * uploads, downloads); a 401 to it is announced (`onTokenRefused`). */
export async function authFetch(input: string, init: RequestInit = {}): Promise<Response> {
  const token = savedToken();
  const response = await fetch(input, { ...init, headers: withToken(init.headers, token) });
  if (response.status === 401 && token !== null && savedToken() === token) tokenRefused();
  return response;
}

/** When a JWT (an identity provider's ID token) stops being valid: its `exp` in seconds since
 * the epoch; null for an API token (`sim_…`) or a JWT without `exp`. The signature is the
 * gateway's to check, never the browser's: this only schedules the next look. */
export function jwtExpiry(token: string | null): number | null {
  const parts = token?.split(".") ?? [];
  if (parts.length !== 3) return null;
  try {
    const base64 = parts[1].replace(/-/g, "+").replace(/_/g, "/");
    const padded = base64 + "=".repeat((4 - (base64.length % 4)) % 4);
    const claims: unknown = JSON.parse(atob(padded));
    const exp = typeof claims === "object" && claims !== null ? (claims as { exp?: unknown }).exp : undefined;
    return typeof exp === "number" && Number.isFinite(exp) ? exp : null;
  } catch {
    return null;
  }
}
