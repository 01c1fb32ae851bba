// The session's world changes (GET /v0/sessions/{id}/world-changes): loaded when the page opens
// and, for a session with a timeline, again after its steps, at most once a second (the last
// step's news comes in at most a second late). Stops asking once the session is gone (410: the
// recording keeps them) or unknown (404). What each answer shows is lib/worldChanges/sessionView.ts.
import { useEffect, useRef, useState } from "react";
import { api, must } from "../../api/client";
import { Throttle } from "../../lib/play/throttle";
import {
  followsAfter, LOADING_WORLD_CHANGES, stopsFollowing, viewAfterFailure, viewOfAnswer, type WorldChangesView,
} from "../../lib/worldChanges/sessionView";

export const WORLD_CHANGES_REFRESH_MS = 1000;

/** The session's world changes, refreshed after each change of `stepped` (e.g. the page's episode view). */
export function useWorldChanges(sessionId: string, stepped: unknown): WorldChangesView {
  const [view, setView] = useState<WorldChangesView>(LOADING_WORLD_CHANGES);
  const throttle = useRef(new Throttle(WORLD_CHANGES_REFRESH_MS));
  const timer = useRef<number | null>(null);
  const live = useRef(true);
  const following = useRef(true); // false once there is no timeline or the session is gone

  const load = useRef(async () => {
    throttle.current.started(performance.now());
    try {
      const answer = await must(api.GET("/v0/sessions/{session_id}/world-changes", { params: { path: { session_id: sessionId } } }));
      if (!live.current) return;
      const next = viewOfAnswer(answer);
      if (!followsAfter(next)) following.current = false;
      setView(next);
    } catch (e) {
      if (!live.current) return;
      if (stopsFollowing(e)) following.current = false;
      setView((previous) => viewAfterFailure(previous, e));
    }
  });

  useEffect(() => {
    live.current = true;
    return () => {
      live.current = false;
      if (timer.current !== null) window.clearTimeout(timer.current);
    };
  }, []);

  useEffect(() => {
    if (!following.current) return;
    const wait = throttle.current.request(performance.now());
    if (wait === null) return;
    timer.current = window.setTimeout(() => {
      timer.current = null;
      void load.current();
    }, wait);
  }, [stepped]);

  return view;
}
