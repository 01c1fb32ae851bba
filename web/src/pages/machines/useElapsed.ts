// Seconds since `active` became true, ticking each second while it stays true (0 otherwise): the
// progress of a request that connects over SSH, which can take seconds.
import { useEffect, useState } from "react";

export function useElapsed(active: boolean): number {
  const [seconds, setSeconds] = useState(0);
  useEffect(() => {
    setSeconds(0);
    if (!active) return undefined;
    const started = Date.now();
    const timer = window.setInterval(() => setSeconds((Date.now() - started) / 1000), 1000);
    return () => window.clearInterval(timer);
  }, [active]);
  return seconds;
}

/** Now in Unix seconds, refreshed every `everyMs` (for "checked 5 min ago"). */
export function useNow(everyMs = 30_000): number {
  const [now, setNow] = useState(() => Date.now() / 1000);
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now() / 1000), everyMs);
    return () => window.clearInterval(timer);
  }, [everyMs]);
  return now;
}
