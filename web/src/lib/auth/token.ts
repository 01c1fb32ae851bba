// The token the web app sends (docs/auth.md): kept in this browser's localStorage after sign-in,
// sent as `Authorization: Bearer` on every API call (the typed client's middleware, `authFetch`)
// and as `?token=` on the session's WebSocket, where a browser cannot set headers.

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

/** `fetch` with the saved token (for the calls outside the typed client: frames, previews, uploads). */
export function authFetch(input: string, init: RequestInit = {}): Promise<Response> {
  return fetch(input, { ...init, headers: withToken(init.headers) });
}
