import { describe, expect, it } from "vitest";
import { episodeOutcome } from "./episodeOutcome";

describe("episodeOutcome", () => {
  it("says success from is_success or success", () => {
    expect(episodeOutcome({ is_success: true, teacher_action: [0] })).toEqual({ success: true, words: "success" });
    expect(episodeOutcome({ success: true })).toEqual({ success: true, words: "success" });
  });
  it("says a won Doom outcome is a success, naming it", () => {
    expect(episodeOutcome({ outcome: "exit" })).toEqual({ success: true, words: "success (exit)" });
    expect(episodeOutcome({ outcome: "completed" })).toEqual({ success: true, words: "success (completed)" });
  });
  it("names other outcomes and a false flag", () => {
    expect(episodeOutcome({ outcome: "died" })).toEqual({ success: false, words: "died" });
    expect(episodeOutcome({ is_success: false })).toEqual({ success: false, words: "not a success" });
  });
  it("says nothing more when the info says nothing", () => {
    for (const info of [null, {}, [], "x", { is_success: 1 }]) expect(episodeOutcome(info)).toEqual({ success: null, words: "" });
  });
});
