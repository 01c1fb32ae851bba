// The frame player's clock: how many steps to advance for the time that passed, at the
// recording's control rate times the chosen speed, carrying the fraction of a step left over.

export const SPEEDS = [0.25, 0.5, 1, 2, 4] as const;
/** Steps a second when the recording does not say its control rate. */
export const DEFAULT_RATE = 30;

export interface Tick {
  steps: number;
  carry: number;
}

export function stepsDue(carry: number, elapsedMs: number, rate: number, speed: number): Tick {
  const total = carry + (Math.max(0, elapsedMs) / 1000) * rate * speed;
  const steps = Math.floor(total);
  return { steps, carry: total - steps };
}

/** The control rate a recording's metadata gives (`spec.metadata.control_rate`, or `metadata`). */
export function controlRate(recording: Record<string, unknown>): number {
  const candidates = [
    (recording.spec as Record<string, unknown> | undefined)?.metadata,
    recording.metadata,
  ];
  for (const metadata of candidates) {
    if (typeof metadata !== "object" || metadata === null) continue;
    const m = metadata as Record<string, unknown>;
    for (const key of ["control_rate", "render_fps"]) {
      const value = m[key];
      if (typeof value === "number" && Number.isFinite(value) && value > 0) return value;
    }
  }
  return DEFAULT_RATE;
}
