import { describe, expect, it } from "vitest";
import { Store } from "./store";

type CounterEvent = { type: "add"; by: number };
const add = (state: { count: number }, event: CounterEvent) => (event.by === 0 ? state : { count: state.count + event.by });

describe("Store", () => {
  it("reduces each event into the state, read at once", () => {
    const store = new Store(add, { count: 0 });
    store.dispatch({ type: "add", by: 2 });
    expect(store.getState()).toEqual({ count: 2 });
    store.dispatch({ type: "add", by: 3 });
    expect(store.getState()).toEqual({ count: 5 });
  });

  it("tells its listeners of each change, and of nothing else", () => {
    const store = new Store(add, { count: 0 });
    const seen: number[] = [];
    const stop = store.subscribe(() => seen.push(store.getState().count));
    store.dispatch({ type: "add", by: 1 });
    store.dispatch({ type: "add", by: 0 }); // the same state: no one is told
    stop();
    store.dispatch({ type: "add", by: 1 });
    expect(seen).toEqual([1]);
    expect(store.getState().count).toBe(2);
  });
});
