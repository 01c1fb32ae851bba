// A session the web app opened for one page (`closes_with_page`) closes when its page goes away.
// On `pagehide` (tab closed, another site, or a reload: a page cannot tell them apart) a keepalive
// POST /v0/sessions/{id}/left, which outlives the page and carries the signed-in token (the API
// client's middleware), tells the gateway, which closes the session a few seconds after its last
// stream closes unless a stream opens again (the reloaded page's). When the Session page unmounts
// (navigation inside the app) it closes the session at once (DELETE). Neither when the user kept
// it ("keep running", which also tells the gateway: PUT /v0/sessions/{id}/keep) or it records. The
// gateway closes it anyway a minute after its last stream closes (platform_gateway.page_sessions),
// for a page that could say nothing.
import { useCallback, useEffect, useRef, useState } from "react";
import { api } from "../../api/client";
import { errorText } from "../../lib/errors";
import type { SessionInfo } from "./sessionInfo";

const mounted = new Map<string, number>(); // Session pages showing each session (StrictMode mounts twice)

export interface PageLifetime {
  /** Whether this page's leaving closes the session (false: not a page session, or it records). */
  closesWithPage: boolean;
  keep: boolean;
  setKeep(keep: boolean): void;
  keepError: string | null;
}

function closeOnLeaving(sessionId: string): void {
  void api.DELETE("/v0/sessions/{session_id}", { params: { path: { session_id: sessionId } }, keepalive: true }).catch(() => undefined);
}

function sayPageLeft(sessionId: string): void {
  void api.POST("/v0/sessions/{session_id}/left", { params: { path: { session_id: sessionId } }, keepalive: true }).catch(() => undefined);
}

export function usePageLifetime(session: SessionInfo, ended: boolean): PageLifetime {
  const closesWithPage = !!session.closes_with_page && !session.record;
  const [keep, setKeepState] = useState(false);
  const [keepError, setKeepError] = useState<string | null>(null);
  const closes = useRef(closesWithPage && !ended);
  closes.current = closesWithPage && !keep && !ended;

  useEffect(() => {
    if (!closesWithPage) return;
    let live = true;
    api.GET("/v0/sessions/{session_id}/keep", { params: { path: { session_id: session.id } } })
      .then(({ data }) => { if (live && data) setKeepState(data.keep); })
      .catch(() => undefined);
    return () => { live = false; };
  }, [closesWithPage, session.id]);

  useEffect(() => {
    const id = session.id;
    mounted.set(id, (mounted.get(id) ?? 0) + 1);
    const onPageHide = () => { if (closes.current) sayPageLeft(id); };
    window.addEventListener("pagehide", onPageHide);
    return () => {
      window.removeEventListener("pagehide", onPageHide);
      mounted.set(id, (mounted.get(id) ?? 1) - 1);
      // Unmounted: another page of the app. A remount at once (StrictMode, the same session) is not leaving.
      setTimeout(() => { if ((mounted.get(id) ?? 0) === 0 && closes.current) closeOnLeaving(id); }, 0);
    };
  }, [session.id]);

  const setKeep = useCallback((value: boolean) => {
    setKeepState(value);
    setKeepError(null);
    api.PUT("/v0/sessions/{session_id}/keep", { params: { path: { session_id: session.id } }, body: { keep: value } })
      .then(({ error }) => { if (error) setKeepError(errorText(error)); })
      .catch((e: unknown) => setKeepError(errorText(e)));
  }, [session.id]);

  return { closesWithPage, keep, setKeep, keepError };
}
