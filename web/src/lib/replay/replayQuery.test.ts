import { describe, expect, it } from "vitest";
import { chooseEpisode, parseReplayQuery } from "./replayQuery";

describe("deep link", () => {
  it("reads episode and step, ignoring what is not a whole number", () => {
    expect(parseReplayQuery(new URLSearchParams("episode=3&step=120"))).toEqual({ episode: 3, step: 120 });
    expect(parseReplayQuery(new URLSearchParams("episode=x&step=-1"))).toEqual({ episode: null, step: null });
    expect(chooseEpisode(3, [0, 1, 2])).toBe(0);
    expect(chooseEpisode(1, [0, 1, 2])).toBe(1);
    expect(chooseEpisode(null, [])).toBeNull();
  });
});
