// Plays a shared cursor: while `playing`, advances it at `rate` steps a second times `speed`
// (lib/replay/playerClock.ts), from its first step again when it starts at its last, and stops
// at its last.
import { type MutableRefObject, useEffect } from "react";
import { stepsDue } from "../../lib/replay/playerClock";

interface Clock {
  playing: boolean;
  rate: number;
  speed: number;
  first: number;
  last: number;
  /** The cursor as it is now (read each frame, not a dependency). */
  cursor: MutableRefObject<number>;
  onCursor: (step: number) => void;
  onStopped: () => void;
}

export function usePlayClock({ playing, rate, speed, first, last, cursor, onCursor, onStopped }: Clock): void {
  useEffect(() => {
    if (!playing) return;
    if (cursor.current >= last) {
      cursor.current = first;
      onCursor(first);
    }
    let carry = 0;
    let before = performance.now();
    let handle = requestAnimationFrame(function tick(now) {
      const due = stepsDue(carry, now - before, rate, speed);
      carry = due.carry;
      before = now;
      if (due.steps > 0) {
        const next = Math.min(last, Math.max(first, cursor.current) + due.steps);
        onCursor(next);
        if (next >= last) {
          onStopped();
          return;
        }
      }
      handle = requestAnimationFrame(tick);
    });
    return () => cancelAnimationFrame(handle);
    // the callbacks are the panel's stable setters
  }, [playing, rate, speed, first, last]);
}
