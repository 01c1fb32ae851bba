// Says, on a live session's page, that its env host's events wait for the platform's event stream:
// the stream is at its limit (PLATFORM_JETSTREAM_MAX_BYTES) because the recorder is that far
// behind, or stopped. The session is read again every few seconds while the page is open and the session is; the
// notice goes once the session's `stream_full_since` is null again.
//
// data-testids: stream-full (data-since: the field's value, seconds since the epoch)
import { useEffect, useState } from "react";
import { api } from "../../api/client";

const POLL_MS = 5000;

/** The session's `stream_full_since` as last read: null while events flow. */
export function useStreamFullSince(sessionId: string, initial: number | null | undefined, open: boolean): number | null {
  const [since, setSince] = useState<number | null>(initial ?? null);
  useEffect(() => {
    if (!open) return;
    let live = true;
    let timer = 0;
    const read = async () => {
      try {
        const { data } = await api.GET("/v0/sessions/{session_id}", { params: { path: { session_id: sessionId } } });
        if (live && data) setSince(data.stream_full_since ?? null);
      } catch {
        /* unreachable for now: the next read tries again */
      }
      if (live) timer = window.setTimeout(() => void read(), POLL_MS);
    };
    timer = window.setTimeout(() => void read(), POLL_MS);
    return () => { live = false; window.clearTimeout(timer); };
  }, [sessionId, open]);
  return open ? since : null;
}

export function StreamFullNotice({ since }: { since: number | null }) {
  if (since === null) return null;
  return (
    <p className="notice" role="status" data-testid="stream-full" data-since={since}>
      Steps may wait: since {new Date(since * 1000).toLocaleTimeString()} the platform's event stream has been full
      (its limit, PLATFORM_JETSTREAM_MAX_BYTES, is reached because the recorder is that far behind, or stopped).
      This session's events wait on its env host and nothing is lost; stepping goes on at full speed once the
      recorder catches up.
    </p>
  );
}
