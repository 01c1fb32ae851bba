// Teams, members and usage (issue 19, managed mode): `/v0/teams`, `/v0/members`, `/v0/usage`,
// through the typed client (their types are generated from the gateway's OpenAPI document, as
// every other). A refusal throws the gateway's ApiError; a 401 sends the app back to sign-in.
import { api, apiError, must, type Schemas } from "./client";

/** A member's role in their team (the operator is no member: PLATFORM_ADMIN_TOKEN, operator
 * tokens, groups mapped to operator). */
export type Role = "admin" | "member";
/** Who may do what (docs/auth.md, "What each role may do"): the platform's operator every team
 * and its quotas; a team's admin its own team's members, tokens and token setting. */
export function roles(role: string | undefined): { isOperator: boolean; managesTeam: boolean } {
  return { isOperator: role === "operator", managesTeam: role === "operator" || role === "admin" };
}
export type TeamPublic = Schemas["TeamPublic"];
export type TeamCreate = Schemas["TeamCreate"];
/** PATCH /v0/teams/{name}: a field left out stays, null clears it (no limit). */
export type TeamChange = Schemas["TeamUpdate"];
export type MemberPublic = Schemas["MemberPublic"];
export type MemberCreate = Schemas["MemberCreate"];
export type UsageRow = Schemas["UsageRowPublic"];
export type UsageReport = Schemas["UsagePublic"];

/** GET /v0/usage's query: days YYYY-MM-DD (UTC), both inclusive; no team: every team the caller sees. */
export interface UsageQuery {
  since: string;
  until: string;
  team?: string | null;
}

/** `/v0/usage?since=&until=[&team=][&format=csv]` (the CSV is downloaded with lib/download.ts). */
export function usagePath(query: UsageQuery, format?: "csv"): string {
  const search = new URLSearchParams({ since: query.since, until: query.until });
  if (query.team) search.set("team", query.team);
  if (format) search.set("format", format);
  return `/v0/usage?${search.toString()}`;
}

async function done(result: Promise<{ error?: unknown; response: Response }>): Promise<void> {
  const { error, response } = await result;
  if (!response.ok) throw apiError(response, error);
}

export const managed = {
  teams: async () => (await must(api.GET("/v0/teams"))).teams,
  createTeam: (body: TeamCreate) => must(api.POST("/v0/teams", { body })),
  updateTeam: (name: string, body: TeamChange) => must(api.PATCH("/v0/teams/{name}", { params: { path: { name } }, body })),
  deleteTeam: (name: string) => done(api.DELETE("/v0/teams/{name}", { params: { path: { name } } })),
  members: async (team?: string | null) =>
    (await must(api.GET("/v0/members", { params: { query: team ? { team } : {} } }))).members,
  addMember: (body: MemberCreate) => must(api.POST("/v0/members", { body })),
  removeMember: (subject: string) => done(api.DELETE("/v0/members/{subject}", { params: { path: { subject } } })),
  usage: async (query: UsageQuery): Promise<UsageReport> => {
    const answer = await must(api.GET("/v0/usage", { params: { query: { since: query.since, until: query.until, team: query.team || undefined } } }));
    if (typeof answer === "string") throw new Error("the platform answered usage as text, not JSON");
    return answer;
  },
};
