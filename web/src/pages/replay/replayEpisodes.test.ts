import { describe, expect, it } from "vitest";
import { type RecordingMeta, replayEpisodes } from "./replayData";

function meta(raw: Record<string, unknown>, episodes: RecordingMeta["episodes"], openEpisode: RecordingMeta["openEpisode"]): RecordingMeta {
  return { raw, id: "r1", envId: "cartpole", episodes, openEpisode, worldChanges: [] };
}

describe("replayEpisodes", () => {
  it("lists the episode being recorded after the finished ones, marked in progress", () => {
    const finished = [{ index: 0, length: 12, return: 12 }];
    const open = { index: 1, length: 4, return: 4, first_seq: 14, last_seq: 18 };
    expect(replayEpisodes(meta({ open_episode: open }, finished, { index: 1, length: 4 }))).toEqual([
      { index: 0, length: 12, return: 12 },
      { index: 1, length: 4, return: 4, in_progress: true },
    ]);
  });

  it("lists only the finished episodes when none is being recorded", () => {
    const finished = [{ index: 0, length: 3 }];
    expect(replayEpisodes(meta({ open_episode: null }, finished, null))).toBe(finished);
  });
});
