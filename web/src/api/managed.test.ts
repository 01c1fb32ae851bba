import { describe, expect, it } from "vitest";
import { roles } from "./managed";

describe("roles", () => {
  it("gives the operator every team and a team's admin its own team only", () => {
    expect(roles("operator")).toEqual({ isOperator: true, managesTeam: true });
    expect(roles("admin")).toEqual({ isOperator: false, managesTeam: true });
    expect(roles("member")).toEqual({ isOperator: false, managesTeam: false });
    expect(roles(undefined)).toEqual({ isOperator: false, managesTeam: false });
  });
});
