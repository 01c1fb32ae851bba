import { describe, expect, it } from "vitest";
import { buildKwargs, defaultText, defaultValues, type EnvOption, errorPlace, rangeText, valueOf } from "./envOptions";

const OPTIONS: EnvOption[] = [
  { name: "frameskip", type: "int", default: 4, minimum: 1, maximum: null, choices: null, help: "frames a decision" },
  { name: "gravity", type: "float", default: null, minimum: -20, maximum: 0, choices: null, help: "" },
  { name: "mode", type: "choice", default: 0, choices: [0, 1, "hard"], help: "" },
  { name: "title", type: "string", default: "", help: "" },
  { name: "endless", type: "bool", default: false, help: "" },
];

describe("the options form", () => {
  it("starts from the defaults", () => {
    expect(defaultValues(OPTIONS)).toEqual({ frameskip: "4", gravity: "", mode: "0", title: "", endless: false });
  });
  it("sends only what differs from the defaults", () => {
    const values = { ...defaultValues(OPTIONS), frameskip: "2", mode: '"hard"', endless: true };
    expect(buildKwargs(OPTIONS, values, "").kwargs).toEqual({ frameskip: 2, mode: "hard", endless: true });
    expect(buildKwargs(OPTIONS, defaultValues(OPTIONS), "").kwargs).toEqual({});
  });
  it("sends a list option's picked names, and nothing when none are picked", () => {
    const variables: EnvOption = { name: "variables", type: "list", default: [], choices: ["HEALTH", "POSITION_X", "ANGLE"], help: "" };
    expect(defaultValues([variables])).toEqual({ variables: "[]" });
    expect(buildKwargs([variables], { variables: "[]" }, "").kwargs).toEqual({});
    expect(buildKwargs([variables], { variables: '["POSITION_X","ANGLE"]' }, "").kwargs).toEqual({ variables: ["POSITION_X", "ANGLE"] });
  });
  it("sends a bad value as typed, for the server to refuse", () => {
    expect(buildKwargs(OPTIONS, { ...defaultValues(OPTIONS), frameskip: "0" }, "").kwargs).toEqual({ frameskip: 0 });
    expect(valueOf(OPTIONS[0], "2.5")).toBe(2.5);
  });
  it("merges the raw JSON over the fields", () => {
    const result = buildKwargs(OPTIONS, { ...defaultValues(OPTIONS), frameskip: "2" }, '{"frameskip": 3, "repeat_action_probability": 0}');
    expect(result).toEqual({ kwargs: { frameskip: 3, repeat_action_probability: 0 }, rawError: null });
  });
  it("puts the editors' kwargs between the fields and the raw JSON", () => {
    const timeline = [{ at: 3, change: "mass", body: "hand", scale: 2 }];
    expect(buildKwargs(OPTIONS, defaultValues(OPTIONS), "", { world_changes: timeline }).kwargs).toEqual({ world_changes: timeline });
    expect(buildKwargs(OPTIONS, defaultValues(OPTIONS), "", { world_changes: undefined }).kwargs).toEqual({});
    expect(buildKwargs(OPTIONS, defaultValues(OPTIONS), '{"world_changes": []}', { world_changes: timeline }).kwargs).toEqual({ world_changes: [] });
  });
  it("says what is wrong with the raw JSON", () => {
    expect(buildKwargs(OPTIONS, {}, "{nope").rawError).toMatch(/^not JSON/);
    expect(buildKwargs(OPTIONS, {}, "[1]").rawError).toMatch(/JSON object/);
  });
  it("describes defaults and ranges", () => {
    expect(defaultText(OPTIONS[0])).toBe("default 4");
    expect(defaultText(OPTIONS[1])).toBe("default: the environment's own");
    expect(rangeText(OPTIONS[0])).toBe("at least 1");
    expect(rangeText(OPTIONS[1])).toBe("-20 to 0");
    expect(rangeText(OPTIONS[3])).toBeNull();
  });
});

describe("errorPlace", () => {
  it("puts a 422 next to the field it names", () => {
    expect(errorPlace("kwargs.frameskip", OPTIONS)).toEqual({ option: "frameskip" });
    expect(errorPlace("kwargs.other", OPTIONS)).toEqual({ raw: true });
    expect(errorPlace("record_frames", OPTIONS)).toEqual({ session: "record_frames" });
    expect(errorPlace("jpeg_quality", OPTIONS)).toEqual({ top: true });
    expect(errorPlace(null, OPTIONS)).toEqual({ top: true });
  });
  it("puts a 422 about the world changes beside their editor", () => {
    expect(errorPlace("kwargs.world_changes[1].body", OPTIONS)).toEqual({ worldChanges: true });
    expect(errorPlace("kwargs.world_changes", OPTIONS)).toEqual({ worldChanges: true });
    expect(errorPlace("kwargs.world_changes_extra", OPTIONS)).toEqual({ raw: true });
  });
});
