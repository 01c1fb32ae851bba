import { describe, expect, it } from "vitest";
import { parseEnvLines } from "./envLines";

describe("the environment's KEY=VALUE lines", () => {
  it("reads names and values, skipping blank lines and comments, keeping the value as typed", () => {
    expect(parseEnvLines("")).toEqual({ env: {}, error: null });
    expect(parseEnvLines("SEED=7\r\n\n# a comment\n  WANDB_MODE = offline\nARGS=--lr=0.1 --x \n")).toEqual({
      env: { SEED: "7", WANDB_MODE: " offline", ARGS: "--lr=0.1 --x " }, error: null,
    });
    expect(parseEnvLines("EMPTY=")).toEqual({ env: { EMPTY: "" }, error: null });
  });

  it("names the line without '=' or without a name, and a name set twice", () => {
    expect(parseEnvLines("SEED=7\nWANDB_MODE offline").error).toBe(
      'Line 2 ("WANDB_MODE offline") has no "=": write KEY=VALUE, e.g. WANDB_MODE=offline.');
    expect(parseEnvLines("=7").error).toBe('Line 1 has no name before "=": write KEY=VALUE, e.g. WANDB_MODE=offline.');
    expect(parseEnvLines("A=1\n\nA=2").error).toBe("Line 3 sets A again (line 1 sets it already): keep one.");
    expect(parseEnvLines(`${"X".repeat(60)}`).error).toContain(`("${"X".repeat(39)}…")`);
  });

  it("leaves the names to the gateway (its 422 says what a name may be)", () => {
    expect(parseEnvLines("1X=y\nPLATFORM_TOKEN=t")).toEqual({ env: { "1X": "y", PLATFORM_TOKEN: "t" }, error: null });
  });
});
