import { describe, expect, it } from "vitest";
import type { Experiment } from "../../api/experiments";
import { clusterNodes } from "./rayCluster";

const experiment = {
  id: "x-000000000001", machine_id: "m-head", machine_name: "head", status: "running", run_dir: "/h/x", ray: null,
} as unknown as Experiment;

describe("an experiment's Ray cluster", () => {
  it("is empty without Ray", () => {
    expect(clusterNodes(experiment)).toEqual([]);
  });

  it("is the head, then each worker in its state", () => {
    const ray = {
      setup: "", venv: ".venv", port: 6379, head_address: "10.0.0.1", start_args: "",
      workers: [
        { machine_id: "m-w1", machine_name: "w1", state: "running", state_reason: "", run_dir: "/h/x-worker-1" },
        { machine_id: "m-w2", machine_name: "w2", state: "failed", state_reason: "no ray", run_dir: "" },
      ],
    };
    const nodes = clusterNodes({ ...experiment, ray } as Experiment);
    expect(nodes.map((n) => [n.role, n.machineName, n.label, n.tone])).toEqual([
      ["head", "head", "Running", "running"],
      ["worker", "w1", "Running", "running"],
      ["worker", "w2", "Failed", "bad"],
    ]);
    expect(nodes[2].reason).toBe("no ray");
  });
});
