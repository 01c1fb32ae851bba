import { describe, expect, it } from "vitest";
import { quotaText, quotaValue, secretOnce, signedInAs, tokenBody, type TokenCreated, tokenState, withoutSecret } from "./team";

const created: TokenCreated = {
  id: "tok-3f2a9c0d1e4b", name: "training cluster", owner: "admin", team: "default", role: "member",
  created_at: 1_800_000_000, last_used_at: null, expires_at: 1_800_000_000 + 90 * 86_400, revoked_at: null,
  token: "sim_the-secret-shown-once",
};

describe("a new token's secret", () => {
  it("is shown once, apart from the list, which never holds it", () => {
    expect(secretOnce(created)).toEqual({ id: "tok-3f2a9c0d1e4b", name: "training cluster", secret: "sim_the-secret-shown-once" });
    const listed = withoutSecret(created);
    expect(listed).not.toHaveProperty("token");
    expect(JSON.stringify(listed)).not.toContain("sim_the-secret");
    const { token: _secret, ...rest } = created;
    expect(_secret).toBe("sim_the-secret-shown-once");
    expect(listed).toEqual(rest);
  });
});

describe("a listed token", () => {
  it("is active, expired or revoked", () => {
    expect(tokenState(created, 1_800_000_001)).toBe("active");
    expect(tokenState({ ...created, expires_at: null }, 4e9)).toBe("active");
    expect(tokenState(created, created.expires_at!)).toBe("expired");
    expect(tokenState({ ...created, revoked_at: 1_800_000_100 }, 1_800_000_200)).toBe("revoked");
  });
});

describe("the create form", () => {
  it("sends a trimmed name, the role and the expiry; the team only when chosen", () => {
    expect(tokenBody({ name: "  ci  ", role: "member", expiresInDays: 30, team: null }))
      .toEqual({ body: { name: "ci", role: "member", expires_in_days: 30 } });
    expect(tokenBody({ name: "ops", role: "admin", expiresInDays: null, team: "ml" }))
      .toEqual({ body: { name: "ops", role: "admin", expires_in_days: null, team: "ml" } });
    expect(tokenBody({ name: "  ", role: "member", expiresInDays: 7, team: null })).toEqual({ problem: "name the token: what is it for?" });
    expect(tokenBody({ name: "x".repeat(201), role: "member", expiresInDays: 7, team: null }))
      .toEqual({ problem: "a token's name is at most 200 characters" });
  });
});

describe("the quota form", () => {
  it("takes empty as no limit, numbers of 0 or more, whole ones for sessions", () => {
    expect(quotaValue("", true)).toEqual({ value: null });
    expect(quotaValue(" 4 ", true)).toEqual({ value: 4 });
    expect(quotaValue("2.5", false)).toEqual({ value: 2.5 });
    expect(quotaValue("2.5", true)).toEqual({ problem: "a whole number, or empty for no limit" });
    expect(quotaValue("-1", false)).toEqual({ problem: "a number of 0 or more, or empty for no limit" });
    expect(quotaValue("lots", false)).toEqual({ problem: "a number of 0 or more, or empty for no limit" });
    expect(quotaText(null, "per month")).toBe("no limit");
    expect(quotaText(100, "per month")).toBe("100 per month");
  });
});

describe("who is signed in", () => {
  it("is an API token by its name and id, anyone else by subject", () => {
    expect(signedInAs({ subject: "tok-3f2a9c0d1e4b", token_name: "training cluster" })).toBe("training cluster (tok-3f2a9c0d1e4b)");
    expect(signedInAs({ subject: "oidc:alice", token_name: null })).toBe("oidc:alice");
    expect(signedInAs({ subject: "admin" })).toBe("admin");
  });
});
