import { describe, expect, it } from "vitest";
import { defaultShown, signalArrayNames, signalLayout, signalPlot } from "./signals";

const f4 = (...shape: number[]) => ({ dtype: "<f4", shape });
const withReset = { length: 3, resetRow: true };

describe("observation and action charts", () => {
  it("plots CartPole's unnamed observation and its Discrete action without labels or a teacher", () => {
    const layout = signalLayout(
      { observations: f4(4, 4), actions: { dtype: "<i8", shape: [3] }, rewards: { dtype: "<f8", shape: [3] } },
      { observationSpace: { type: "box", shape: [4] }, actionSpace: { type: "discrete", n: 2 } },
    );
    expect(layout.skipped).toEqual([]);
    expect(layout.groups.map((g) => [g.id, g.title, g.stepped])).toEqual([
      ["observation", "observation", false],
      ["action", "action", true],
    ]);
    expect(layout.groups[0].columns.map((c) => c.label)).toEqual(["observation[0]", "observation[1]", "observation[2]", "observation[3]"]);
    expect(signalArrayNames(layout.groups)).toEqual(["observations", "actions"]);

    const obs = signalPlot(layout.groups[0], { dtype: "<f4", shape: [4, 4], data: [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, "nan", 11], [12, 13, 14, 15]] }, withReset);
    expect(obs.x).toEqual([0, 1, 2, 3]); // the reset's row is step 0
    expect(obs.series[2].values).toEqual([2, 6, null, 14]);
    const act = signalPlot(layout.groups[1], { dtype: "<i8", shape: [3], data: [1, 0, 1] }, withReset);
    expect(act.x).toEqual([1, 2, 3]); // the action that led to the step
    expect(act.series).toEqual([{ label: "action", values: [1, 0, 1] }]);
    expect(act.flag).toBe(false);
  });

  it("groups a labelled observation by label and names actions from metadata.action_names", () => {
    const spec = {
      observation_labels: [{ name: "height", start: 0, stop: 1 }, { name: "velocity", start: 3, stop: 5 }],
      metadata: { action_names: ["hip", "knee"] },
    };
    const layout = signalLayout({ observations: f4(4, 6), actions: f4(3, 2) }, { spec, actionSpace: { type: "box", shape: [2] } });
    expect(layout.groups.map((g) => g.id)).toEqual(["observation.height", "observation.velocity", "observation[1–5]", "action"]);
    expect(layout.groups[1].columns).toEqual([{ index: 3, label: "velocity[0]" }, { index: 4, label: "velocity[1]" }]);
    expect(layout.groups[0].columns).toEqual([{ index: 0, label: "height" }]);
    expect(layout.groups[2].columns.map((c) => c.index)).toEqual([1, 2, 5]);
    expect(layout.groups[3].columns.map((c) => c.label)).toEqual(["hip", "knee"]);
  });

  it("also takes labels as {name: [start, stop]}", () => {
    const layout = signalLayout({ observations: f4(2, 2) }, { spec: { observation_labels: { a: [0, 1], b: [1, 2] } } });
    expect(layout.groups.map((g) => g.title)).toEqual(["observation · a", "observation · b"]);
  });

  it("names a Discrete action's values, splits wide actions 8 to a chart and Dict observations by key", () => {
    const pong = signalLayout({ actions: { dtype: "<i8", shape: [5] } }, {
      actionSpace: { type: "discrete", n: 3 }, spec: { metadata: { action_names: ["NOOP", "UP", "DOWN"] } },
    });
    expect(pong.groups[0].valueNames).toEqual(["NOOP", "UP", "DOWN"]);

    const h1 = signalLayout({ actions: f4(10, 19) }, { actionSpace: { type: "box", shape: [19] } });
    expect(h1.groups.map((g) => [g.id, g.columns.length])).toEqual([["action[0–7]", 8], ["action[8–15]", 8], ["action[16–18]", 3]]);

    const dict = signalLayout({ "observations.arm": f4(4, 2), "observations.gripper": f4(4) }, {});
    expect(dict.groups.map((g) => [g.id, g.columns.map((c) => c.label)])).toEqual([
      ["observation.arm", ["observation.arm[0]", "observation.arm[1]"]],
      ["observation.gripper", ["observation.gripper"]],
    ]);
  });

  it("leaves images and very wide rows out, saying why", () => {
    const layout = signalLayout({ observations: { dtype: "|u1", shape: [11, 210, 160, 3] }, "actions": f4(10, 600) }, {});
    expect(layout.groups).toEqual([]);
    expect(layout.skipped.map((s) => [s.array, s.reason])).toEqual([
      ["observations", "an image (210×160×3) each step: its frames are shown above, not plotted as numbers"],
      ["actions", "600 numbers each step: too many to plot"],
    ]);
  });

  it("shows the first observation and action charts before any is picked", () => {
    const layout = signalLayout({ observations: f4(2, 40), actions: f4(1, 19) }, {});
    const shown = defaultShown(layout.groups, 4);
    expect([...shown]).toEqual(["observation[0–7]", "observation[8–15]", "action[0–7]", "action[8–15]"]);
    expect(defaultShown(layout.groups.slice(0, 2), 4).size).toBe(2);
  });
});
