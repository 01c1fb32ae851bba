// The Team page's logic without React: API tokens (their state, the create form's body, the
// one-time secret kept apart from the list), and the quota form's numbers.
import type { Schemas } from "../../api/client";

export type TokenPublic = Schemas["TokenPublic"];
export type TokenCreated = Schemas["TokenCreated"];
export type TokenCreate = Schemas["TokenCreate"];

export type TokenState = "active" | "expired" | "revoked";

/** Whether a listed token still works (`now` in seconds since the epoch). */
export function tokenState(token: Pick<TokenPublic, "expires_at" | "revoked_at">, now: number): TokenState {
  if (token.revoked_at !== null && token.revoked_at !== undefined) return "revoked";
  if (token.expires_at !== null && token.expires_at !== undefined && token.expires_at <= now) return "expired";
  return "active";
}

/** The expiry choices of the create form (null: never). */
export const EXPIRY_CHOICES: readonly { label: string; days: number | null }[] = [
  { label: "7 days", days: 7 },
  { label: "30 days", days: 30 },
  { label: "90 days", days: 90 },
  { label: "1 year", days: 365 },
  { label: "never", days: null },
];
export const DEFAULT_EXPIRY_DAYS = 90;

export type TokenRole = TokenCreate["role"];

export interface TokenForm {
  name: string;
  role: TokenRole;
  expiresInDays: number | null;
  /** The team it is for; sent only when the operator picks another team than their own. */
  team: string | null;
}

/** The POST /v0/tokens body of the form, or why it cannot be sent. */
export function tokenBody(form: TokenForm): { body: TokenCreate } | { problem: string } {
  const name = form.name.trim();
  if (!name) return { problem: "name the token: what is it for?" };
  if (name.length > 200) return { problem: "a token's name is at most 200 characters" };
  const body: TokenCreate = { name, role: form.role, expires_in_days: form.expiresInDays };
  if (form.team) body.team = form.team;
  return { body };
}

/** A created token as the list keeps it: everything but its secret. */
export function withoutSecret(created: TokenCreated): TokenPublic {
  const { token: _secret, ...listed } = created;
  void _secret;
  return listed;
}

/** The one time a token's secret is shown: right after it was made, until dismissed. */
export interface SecretOnce {
  id: string;
  name: string;
  secret: string;
}

export function secretOnce(created: TokenCreated): SecretOnce {
  return { id: created.id, name: created.name, secret: created.token };
}

/** A time in seconds since the epoch, for the tables ("–" when there is none). */
export function whenText(seconds: number | string | null | undefined): string {
  if (seconds === null || seconds === undefined || seconds === "") return "–";
  const date = typeof seconds === "number" ? new Date(seconds * 1000) : new Date(seconds);
  if (Number.isNaN(date.getTime())) return String(seconds);
  return date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/** A quota field's text as the value to send: "" is no limit (null); else a number ≥ 0 (a
 * whole one for sessions). */
export function quotaValue(text: string, whole: boolean): { value: number | null } | { problem: string } {
  const trimmed = text.trim();
  if (trimmed === "") return { value: null };
  const value = Number(trimmed);
  if (!Number.isFinite(value) || value < 0) return { problem: "a number of 0 or more, or empty for no limit" };
  if (whole && !Number.isInteger(value)) return { problem: "a whole number, or empty for no limit" };
  return { value };
}

/** A quota for people: "no limit" for null. */
export function quotaText(value: number | null | undefined, unit: string): string {
  if (value === null || value === undefined) return "no limit";
  return `${Number.isInteger(value) ? value : value.toFixed(2)} ${unit}`;
}

/** Who is signed in, as the Team page says it: an API token by its name (and id), others by subject. */
export function signedInAs(who: { subject: string; token_name?: string | null }): string {
  return who.token_name ? `${who.token_name} (${who.subject})` : who.subject;
}
