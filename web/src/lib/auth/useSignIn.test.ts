import { describe, expect, it } from "vitest";
import { signedOutNow, type SignInState } from "./useSignIn";

const how = { mode: "self-hosted", auth: "token", token_required: true } as const;

describe("signing out", () => {
  it("leaves the signed-in pages at once, keeping how the platform signs in", () => {
    const signedIn = { phase: "signed-in", how, who: { id: "tok-1" } } as unknown as SignInState;
    expect(signedOutNow(signedIn)).toEqual({ phase: "signed-out", how, reason: null });
  });

  it("changes nothing on a platform that needs no token, or before the first check", () => {
    const open = { phase: "open", how: { ...how, token_required: false }, who: null } as unknown as SignInState;
    expect(signedOutNow(open)).toBe(open);
    const checking: SignInState = { phase: "checking" };
    expect(signedOutNow(checking)).toBe(checking);
  });
});
