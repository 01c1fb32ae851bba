// At most one refresh per interval, however often it is asked for: the Session page reloads
// its world changes after steps, no more than once a second while playing, and once more after
// the last step so the list ends up current.

export class Throttle {
  private last = -Infinity;
  private scheduled = false;

  constructor(private readonly intervalMs: number) {}

  /**
   * Asked for a refresh at `now`: the milliseconds to wait before it (0: at once), or null when
   * one is already scheduled (it will see the news).
   */
  request(now: number): number | null {
    if (this.scheduled) return null;
    this.scheduled = true;
    return Math.max(0, this.last + this.intervalMs - now);
  }

  /** The scheduled refresh starts at `now`. */
  started(now: number): void {
    this.scheduled = false;
    this.last = now;
  }
}
