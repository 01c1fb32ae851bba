import { describe, expect, it } from "vitest";
import { TaskQueue } from "./taskQueue";

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe("TaskQueue", () => {
  it("runs at most `limit` tasks at once, in order", async () => {
    const queue = new TaskQueue(2);
    const gates = [deferred(), deferred(), deferred()];
    const started: number[] = [];
    const runs = gates.map((g, i) => queue.run(async () => { started.push(i); await g.promise; return i; }));
    expect(started).toEqual([0, 1]);
    expect(queue.size).toEqual({ running: 2, waiting: 1 });
    gates[0].resolve();
    expect(await runs[0]).toBe(0);
    await Promise.resolve();
    expect(started).toEqual([0, 1, 2]);
    gates[1].resolve();
    gates[2].resolve();
    expect(await Promise.all(runs)).toEqual([0, 1, 2]);
    expect(queue.size).toEqual({ running: 0, waiting: 0 });
  });

  it("drops a waiting task whose signal aborted", async () => {
    const queue = new TaskQueue(1);
    const gate = deferred();
    const first = queue.run(() => gate.promise);
    const controller = new AbortController();
    let ran = false;
    const second = queue.run(async () => { ran = true; }, controller.signal);
    const third = queue.run(async () => "third");
    controller.abort(new Error("gone"));
    gate.resolve();
    await first;
    await expect(second).rejects.toThrow("gone");
    expect(await third).toBe("third");
    expect(ran).toBe(false);
  });

  it("a failed task frees its place", async () => {
    const queue = new TaskQueue(1);
    await expect(queue.run(() => Promise.reject(new Error("no")))).rejects.toThrow("no");
    expect(await queue.run(async () => 1)).toBe(1);
  });
});
