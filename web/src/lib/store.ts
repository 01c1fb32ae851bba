// A small external store, for React's useSyncExternalStore: a state changed only by events through
// a pure reducer, read at once by whoever holds the store (so callbacks never see a stale copy),
// and listeners told of each change. An event that leaves the state as it was tells no one.
//
//   const store = new Store(nextPlayState, initialPlayState(values));
//   const state = useSyncExternalStore(store.subscribe, store.getState);
//   store.dispatch({ type: "modeChanged", mode: "playing" });

export class Store<State, Event> {
  private current: State;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly reduce: (state: State, event: Event) => State, initial: State) {
    this.current = initial;
  }

  /** The state now. */
  readonly getState = (): State => this.current;

  /** Calls `listener` after every change; returns what removes it. */
  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  };

  dispatch(event: Event): void {
    const next = this.reduce(this.current, event);
    if (next === this.current) return;
    this.current = next;
    for (const listener of [...this.listeners]) listener();
  }
}
