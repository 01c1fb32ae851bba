import { describe, expect, it } from "vitest";
import {
  endingText, episodesQuery, filtersOf, NO_FILTERS, replayLink, searchOf, showsFailures, toggleFailures,
} from "./episodeQuery";

describe("the episode browser's filters", () => {
  it("round-trip through the URL, keeping only what is set", () => {
    const filters = { env_id: "freedoom-e1m1", outcome: "died", success: "false", sort: "-return" } as const;
    expect(filtersOf(searchOf(filters))).toEqual(filters);
    expect(searchOf(NO_FILTERS).toString()).toBe("");
  });

  it("fall back to any and newest for values the page does not know", () => {
    expect(filtersOf(new URLSearchParams("success=maybe&sort=best"))).toEqual(NO_FILTERS);
  });

  it("become the API's query, success as a boolean", () => {
    expect(episodesQuery({ ...NO_FILTERS, success: "false" }, "100", 50)).toEqual({
      env_id: undefined, outcome: undefined, success: false, sort: "newest", limit: 50, cursor: "100",
    });
    expect(episodesQuery(NO_FILTERS, null, 100).success).toBeUndefined();
  });

  it("toggle failures on and off", () => {
    const on = toggleFailures({ ...NO_FILTERS, success: "true" });
    expect(showsFailures(on)).toBe(true);
    expect(showsFailures(toggleFailures(on))).toBe(false);
  });
});

describe("an episode's row", () => {
  it("links to the replay at the episode", () => {
    expect(replayLink({ recording_id: "s 1", episode: { index: 3 } })).toBe("/recordings/s%201?episode=3");
  });

  it("says how the episode ended", () => {
    expect(endingText({ index: 0, is_success: false, outcome: "died" })).toBe("failure (died)");
    expect(endingText({ index: 0, is_success: true })).toBe("success");
    expect(endingText({ index: 0, outcome: "timeout" })).toBe("timeout");
    expect(endingText({ index: 0, terminated: true, truncated: false })).toBe("terminated");
    expect(endingText({ index: 0, terminated: false, truncated: true })).toBe("truncated");
    expect(endingText({ index: 0 })).toBe("–");
  });
});
