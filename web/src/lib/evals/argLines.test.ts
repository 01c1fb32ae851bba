import { describe, expect, it } from "vitest";
import { parseArgLines, secretsOf } from "./argLines";

describe("parseArgLines", () => {
  it("reads JSON values as JSON and other values as text", () => {
    expect(parseArgLines("limit=5\nshuffle=true\n# a comment\n\nname=hard mode\nlist=[1, 2]\nq=\"7\"\n")).toEqual({
      args: { limit: 5, shuffle: true, name: "hard mode", list: [1, 2], q: "7" }, error: null,
    });
  });
  it("refuses a line without '=' and a name given twice, naming the line", () => {
    expect(parseArgLines("limit").error).toMatch(/Line 1 .*name=value/);
    expect(parseArgLines("a=1\na=2").error).toMatch(/Line 2 sets a again/);
  });
});

describe("secretsOf", () => {
  it("keeps the named rows and skips empty ones", () => {
    expect(secretsOf([{ name: "OPENAI_API_KEY", value: "sk-1" }, { name: "", value: "" }])).toEqual({
      secrets: { OPENAI_API_KEY: "sk-1" }, error: null,
    });
  });
  it("refuses a value without a name and a name twice", () => {
    expect(secretsOf([{ name: "", value: "x" }]).error).toMatch(/Secret 1 has a value but no name/);
    expect(secretsOf([{ name: "A", value: "1" }, { name: "A", value: "2" }]).error).toMatch(/A is given twice/);
  });
});
