import { describe, expect, it } from "vitest";
import type { Machine } from "../../api/machines";
import { experimentNamed, fieldOf, machineChoices, notReady } from "./newExperiment";

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

describe("where a refusal shows", () => {
  it("beside the field the gateway names", () => {
    expect(fieldOf({ status: 422, detail: "failed at once", code: "invalid", field: "command" })).toBe("command");
    expect(fieldOf({ status: 422, detail: "too long", code: "invalid", field: "env.SEED" })).toBe("env");
    expect(fieldOf({ status: 409, detail: "1 free GPU, not 2", code: "conflict", field: "gpus" })).toBe("gpus");
    expect(fieldOf({ status: 404, detail: "machine 'm-0' not found", code: "not_found" })).toBe("machine");
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
