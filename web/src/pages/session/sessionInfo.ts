// The session as GET /v0/sessions/{id} describes it (spaces, metadata, labels, state).
import { useEffect, useState } from "react";
import { api, must, type Schemas } from "../../api/client";
import { errorText } from "../../lib/errors";

export type SessionInfo = Schemas["SessionPublic"];

export type Loaded = { state: "loading" } | { state: "error"; message: string; status: number | null } | { state: "loaded"; session: SessionInfo };

/** The session of `sessionId` (loading again, never the previous session's, when the id changes). */
export function useSessionInfo(sessionId: string): Loaded {
  const [loaded, setLoaded] = useState<{ id: string; loaded: Loaded }>({ id: sessionId, loaded: { state: "loading" } });
  useEffect(() => {
    let live = true;
    const settle = (result: Loaded) => { if (live) setLoaded({ id: sessionId, loaded: result }); };
    must(api.GET("/v0/sessions/{session_id}", { params: { path: { session_id: sessionId } } }))
      .then((session) => settle({ state: "loaded", session }))
      .catch((e: unknown) => {
        const status = typeof e === "object" && e !== null && "status" in e ? Number((e as { status: unknown }).status) : null;
        settle({ state: "error", message: errorText(e), status });
      });
    return () => { live = false; };
  }, [sessionId]);
  return loaded.id === sessionId ? loaded.loaded : { state: "loading" };
}
