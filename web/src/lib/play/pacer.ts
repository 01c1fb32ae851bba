// When the play loop may send its next step: at most `rate` steps a second on average, at most
// one step in flight, and no backlog. Steps keep to a schedule one period apart, so an answer that
// comes a little late (less than a period) costs nothing on average: the next step goes at its
// scheduled time, which is sooner. An answer more than a period late starts the schedule again
// from when its step goes: what was lost is never made up in a burst.

/** Steps a second when the environment reports no `metadata.control_rate`. */
export const DEFAULT_CONTROL_RATE = 30;

/** The control rate from a session's metadata (decisions a second), else the default. */
export function controlRate(metadata: Record<string, unknown> | undefined): number {
  const rate = metadata?.control_rate;
  return typeof rate === "number" && Number.isFinite(rate) && rate > 0 ? rate : DEFAULT_CONTROL_RATE;
}

export class StepPacer {
  readonly periodMs: number;
  /** When the next step is due (the schedule); -Infinity before the first. */
  private dueAt = -Infinity;
  private inFlight = false;

  constructor(rate: number) {
    this.periodMs = 1000 / rate;
  }

  /** Milliseconds until the next step may go (0: now), or null while one is in flight. */
  delay(now: number): number | null {
    if (this.inFlight) return null;
    return Math.max(0, this.dueAt - now);
  }

  /** A step went at `now`: the next is due one period after its scheduled time, or after `now`
   * when it went more than a period late. */
  sent(now: number): void {
    this.inFlight = true;
    const onSchedule = now - this.dueAt <= this.periodMs;
    this.dueAt = (onSchedule ? this.dueAt : now) + this.periodMs;
  }

  /** Its answer came (or it failed). */
  answered(): void {
    this.inFlight = false;
  }

  get busy(): boolean {
    return this.inFlight;
  }
}

/** Answers a second over the last `windowMs` (frames shown a second while playing). */
export class RateMeter {
  private times: number[] = [];
  constructor(private readonly windowMs = 1000) {}

  tick(now: number): void {
    this.times.push(now);
    this.drop(now);
  }

  rate(now: number): number {
    this.drop(now);
    return (this.times.length * 1000) / this.windowMs;
  }

  private drop(now: number): void {
    while (this.times.length > 0 && this.times[0] <= now - this.windowMs) this.times.shift();
  }
}
