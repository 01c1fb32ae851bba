import { describe, expect, it } from "vitest";
import type { Machine } from "../../api/machines";
import { createBody, experimentNamed, fieldOf, fieldShown, type FormValues, machineChoices, notReady } from "./newExperiment";

const gpu = (index: number) => ({ index, name: "NVIDIA H100 80GB HBM3", memory_total_mib: 81559, uuid: `GPU-${index}`, driver_version: "550" });
const machine = (id: string, name: string, status: Machine["status"], gpus: number) =>
  ({ id, name, status, facts: { gpus: Array.from({ length: gpus }, (_, i) => gpu(i)) } }) as unknown as Machine;

describe("the machines the form offers", () => {
  it("lists only ready machines with their GPU count", () => {
    const listed = [machine("m-1", "h100-box", "ready", 2), machine("m-2", "down", "unreachable", 8),
      machine("m-3", "cpu-box", "ready", 0), machine("m-4", "one", "ready", 1)];
    expect(machineChoices(listed)).toEqual([
      { id: "m-1", name: "h100-box", gpus: 2, label: "h100-box (2 GPUs)" },
      { id: "m-3", name: "cpu-box", gpus: 0, label: "cpu-box (no GPU)" },
      { id: "m-4", name: "one", gpus: 1, label: "one (1 GPU)" },
    ]);
    expect(notReady(listed)).toEqual(["down (unreachable)"]);
  });
});

describe("the request", () => {
  const form: FormValues = {
    machine: "m-1", source: "repository", repository: " https://github.com/acme/train.git ", ref: " v2 ",
    folder: "/srv/code/train", command: "python train.py", gpus: 2, shareGpus: true, env: { SEED: "7" },
  };

  it("sends the repository and ref, and no folder, when the code is from a repository", () => {
    expect(createBody(form)).toEqual({
      machine: "m-1", repository: "https://github.com/acme/train.git", ref: "v2", folder: "", command: "python train.py",
      gpus: 2, share_gpus: true, env: { SEED: "7" },
    });
  });

  it("sends the folder, and neither repository nor ref, when the code is from a folder", () => {
    expect(createBody({ ...form, source: "folder", folder: " /srv/code/train ", shareGpus: false })).toEqual({
      machine: "m-1", repository: "", ref: "", folder: "/srv/code/train", command: "python train.py",
      gpus: 2, share_gpus: false, env: { SEED: "7" },
    });
  });

  it("shows the chosen source's fields only", () => {
    expect(fieldShown("folder", "folder")).toBe(true);
    expect(fieldShown("folder", "repository")).toBe(false);
    expect(fieldShown("ref", "folder")).toBe(false);
    expect(fieldShown("repository", "repository")).toBe(true);
    expect(fieldShown("gpus", "folder")).toBe(true);
  });
});

describe("where a refusal shows", () => {
  it("beside the field the gateway names", () => {
    expect(fieldOf({ status: 422, detail: "failed at once", code: "invalid", field: "command" })).toBe("command");
    expect(fieldOf({ status: 422, detail: "too long", code: "invalid", field: "env.SEED" })).toBe("env");
    expect(fieldOf({ status: 409, detail: "1 free GPU, not 2", code: "conflict", field: "gpus" })).toBe("gpus");
    expect(fieldOf({ status: 404, detail: "machine 'm-0' not found", code: "not_found" })).toBe("machine");
    expect(fieldOf({ status: 422, detail: "/etc is outside the folders that may be uploaded", code: "invalid", field: "folder" })).toBe("folder");
  });

  it("below the form otherwise", () => {
    expect(fieldOf({ status: 503, detail: "machines unavailable", code: "unavailable" })).toBeNull();
    expect(fieldOf({ status: 422, detail: "?", code: "invalid", field: "body" })).toBeNull();
    expect(fieldOf(new Error("network"))).toBeNull();
    expect(fieldOf(null)).toBeNull();
  });
});

describe("a command that failed at once", () => {
  it("names the experiment it left, to open its log", () => {
    expect(experimentNamed("experiment x-4ce968d91947 on machine 'box': the command failed at once (exit 7): no")).toBe("x-4ce968d91947");
    expect(experimentNamed("machine 'box' has 2 GPUs (its last check), not 3")).toBeNull();
  });
});
