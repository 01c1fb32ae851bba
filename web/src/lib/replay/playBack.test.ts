import { describe, expect, it } from "vitest";
import { divergence, firstDivergentStep, judgeReset, judgeStep, playBackBlocker, sameReward, type RecordedEpisode } from "./playBack";
import { episodeSteps } from "./steps";

describe("play back", () => {
  const recorded: RecordedEpisode = {
    steps: episodeSteps({ length: 3, start: "reset" }),
    rewards: [1, 1, NaN],
    terminated: [false, false, true],
    truncated: [false, false, false],
    digests: ["aa", "bb", "cc", "dd"],
  };

  it("matches a step when observation, reward and flags are the recorded ones", () => {
    const verdicts = [
      judgeReset(recorded, "AA"),
      judgeStep(recorded, 1, { reward: 1, terminated: false, truncated: false, digest: "bb" }),
      judgeStep(recorded, 2, { reward: 1, terminated: false, truncated: false, digest: "cc" }),
      judgeStep(recorded, 3, { reward: NaN, terminated: true, truncated: false, digest: "dd" }),
    ];
    expect(verdicts.every((v) => v.match)).toBe(true);
    expect(firstDivergentStep(verdicts)).toBeNull();
  });

  it("names the first divergent step and what differed", () => {
    const verdicts = [
      judgeReset(recorded, "aa"),
      judgeStep(recorded, 1, { reward: 1, terminated: false, truncated: false, digest: "bb" }),
      judgeStep(recorded, 2, { reward: 0.5, terminated: false, truncated: false, digest: "cc" }),
      judgeStep(recorded, 3, { reward: NaN, terminated: false, truncated: false, digest: "ee" }),
    ];
    expect(firstDivergentStep(verdicts)).toBe(2);
    expect(divergence(verdicts[2])).toBe("reward 0.5 (recorded 1)");
    expect(divergence(verdicts[3])).toBe("observation differs, episode end differs");
    expect(judgeReset(recorded, "ff").match).toBe(false);
    expect(firstDivergentStep([judgeReset(recorded, "ff")])).toBe(0);
  });

  it("compares rewards alone when there is no digest", () => {
    const verdict = judgeStep({ ...recorded, digests: [] }, 1, { reward: 1, terminated: false, truncated: false, digest: null });
    expect(verdict.observationMatch).toBeNull();
    expect(verdict.match).toBe(true);
    expect(sameReward(0, -0)).toBe(true);
    expect(sameReward(NaN, 1)).toBe(false);
  });

  it("says why an episode cannot be played back", () => {
    expect(playBackBlocker({ start: "reset", file: "e.npz" }, {})).toBeNull();
    expect(playBackBlocker({ start: "restore" }, {})).toMatch(/snapshot/);
    expect(playBackBlocker({ start: "none" }, {})).toMatch(/continues/);
    expect(playBackBlocker({ start: "reset" }, { _unparsed: "x" })).toMatch(/kwargs/);
  });
});
