// Creating sessions for the play pages (POST /v0/sessions) and resuming a saved snapshot into
// a new one, as platform_sdk.resume does: the snapshot's environment and kwargs, then the
// Session page restores it (`?resume=<snapshot id>`) instead of resetting.
import { api, must, type Schemas } from "../../api/client";

export type SessionCreate = Schemas["SessionCreate"];

export async function createSession(body: Partial<SessionCreate> & { env_id: string }): Promise<Schemas["SessionPublic"]> {
  return must(api.POST("/v0/sessions", {
    // closes_with_page: the session belongs to the page that opened it (Session page: usePageLifetime)
    body: { auto_reset: false, record: false, record_frames: false, durable: false, kwargs: {}, closes_with_page: true, ...body },
  }));
}

/** A new session at a saved snapshot's moment; returns the path of its Session page. */
export async function resumeSnapshot(snapshotId: string, record: { record: boolean; record_frames: boolean }): Promise<string> {
  const saved = await must(api.GET("/v0/snapshots/{snapshot_id}", { params: { path: { snapshot_id: snapshotId } } }));
  const session = await createSession({ env_id: saved.env_id, kwargs: saved.kwargs ?? {}, ...record });
  return sessionPath(session.id, { resume: snapshotId });
}

export function sessionPath(id: string, query: Record<string, string> = {}): string {
  const search = new URLSearchParams(query).toString();
  return `/sessions/${encodeURIComponent(id)}${search ? `?${search}` : ""}`;
}
