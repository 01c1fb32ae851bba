import { describe, expect, it } from "vitest";
import { chooseEpisode, parseReplayQuery, stepAskedByLink } from "./replayQuery";

describe("deep link", () => {
  it("reads episode and step, ignoring what is not a whole number", () => {
    expect(parseReplayQuery(new URLSearchParams("episode=3&step=120"))).toEqual({ episode: 3, step: 120 });
    expect(parseReplayQuery(new URLSearchParams("episode=x&step=-1"))).toEqual({ episode: null, step: null });
    expect(chooseEpisode(3, [0, 1, 2])).toBe(0);
    expect(chooseEpisode(1, [0, 1, 2])).toBe(1);
    expect(chooseEpisode(null, [])).toBeNull();
  });
});

describe("a changed ?step=", () => {
  it("moves the cursor to a step the link asks for", () => {
    expect(stepAskedByLink(40, 12, 12)).toBe(40);
    expect(stepAskedByLink(40, null, 0)).toBe(40);
  });

  it("leaves the cursor where it is when the link is the page's own write coming back", () => {
    // the link was set to step 2; the cursor moved on to 57 before the address changed
    expect(stepAskedByLink(2, 2, 57)).toBeNull();
  });

  it("does nothing without a step, or for the step shown", () => {
    expect(stepAskedByLink(null, 3, 5)).toBeNull();
    expect(stepAskedByLink(5, 3, 5)).toBeNull();
  });
});
