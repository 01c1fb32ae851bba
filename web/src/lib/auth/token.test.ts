import { describe, expect, it } from "vitest";
import { forgetToken, savedToken, saveToken, type TokenStorage, withToken } from "./token";

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
