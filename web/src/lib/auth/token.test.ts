import { describe, expect, it } from "vitest";
import { forgetToken, jwtExpiry, onTokenRefused, savedToken, saveToken, tokenRefused, type TokenStorage, withToken } from "./token";

function memory(): TokenStorage {
  const items = new Map<string, string>();
  return {
    getItem: (k) => items.get(k) ?? null,
    setItem: (k, v) => void items.set(k, v),
    removeItem: (k) => void items.delete(k),
  };
}

describe("the saved token", () => {
  it("is kept trimmed, forgotten on sign-out, and blank means none", () => {
    const store = memory();
    expect(savedToken(store)).toBeNull();
    saveToken("  sim_abc \n", store);
    expect(savedToken(store)).toBe("sim_abc");
    forgetToken(store);
    expect(savedToken(store)).toBeNull();
    saveToken("   ", store);
    expect(savedToken(store)).toBeNull();
  });

  it("goes into the Authorization header unless the call sets its own", () => {
    expect(withToken({}, "sim_abc").get("Authorization")).toBe("Bearer sim_abc");
    expect(withToken({ Authorization: "Bearer other" }, "sim_abc").get("Authorization")).toBe("Bearer other");
    expect(withToken({ "Content-Type": "x" }, null).has("Authorization")).toBe(false);
  });
});

describe("an identity token's expiry", () => {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");

  it("is its exp claim; API tokens and garbled tokens have none", () => {
    expect(jwtExpiry(`${part({ alg: "RS256" })}.${part({ sub: "a", exp: 1_900_000_000 })}.c2ln`)).toBe(1_900_000_000);
    expect(jwtExpiry(`${part({ alg: "RS256" })}.${part({ sub: "a" })}.c2ln`)).toBeNull();
    expect(jwtExpiry("sim_abc")).toBeNull();
    expect(jwtExpiry("a.%%%.c")).toBeNull();
    expect(jwtExpiry(null)).toBeNull();
  });
});

describe("a refused token", () => {
  it("is announced to every listener until it unsubscribes", () => {
    const heard: string[] = [];
    const stopA = onTokenRefused(() => heard.push("a"));
    const stopB = onTokenRefused(() => heard.push("b"));
    tokenRefused();
    stopA();
    tokenRefused();
    stopB();
    tokenRefused();
    expect(heard).toEqual(["a", "b", "b"]);
  });
});
