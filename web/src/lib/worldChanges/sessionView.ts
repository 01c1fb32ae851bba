// What the Session page shows of a live session's world changes, from its answers to
// GET /v0/sessions/{id}/world-changes: nothing for a session without a timeline, the timeline's
// rows with how many changes applied so far, or why it could not be read. The page asks again
// after steps while the session has a timeline and is there (not 404, not 410: a gone session's
// changes are the recording's to keep).
import type { Schemas } from "../../api/client";
import { errorText } from "../errors";
import { timelineRows, type TimelineRow } from "./timeline";

export type WorldChangesView =
  | { state: "loading" }
  | { state: "none" }
  | { state: "ready"; rows: TimelineRow[]; applied: number }
  | { state: "error"; message: string };

export const LOADING_WORLD_CHANGES: WorldChangesView = { state: "loading" };

/** What an answer shows: "none" when the session has no timeline (nothing more to ask then). */
export function viewOfAnswer(answer: Pick<Schemas["WorldChangesPublic"], "timeline" | "applied">): WorldChangesView {
  if (answer.timeline.length === 0) return { state: "none" };
  return { state: "ready", rows: timelineRows(answer.timeline, answer.applied), applied: answer.applied.length };
}

/** The HTTP status of a failed call's error (an ApiError), or null. */
function statusOf(error: unknown): unknown {
  return typeof error === "object" && error !== null && "status" in error ? (error as { status: unknown }).status : null;
}

/** Whether the page should stop asking after this failure: the session is unknown (404) or gone (410). */
export function stopsFollowing(error: unknown): boolean {
  const status = statusOf(error);
  return status === 404 || status === 410;
}

/** What a failed call shows: the error, except that a session gone (410) keeps the rows it had. */
export function viewAfterFailure(previous: WorldChangesView, error: unknown): WorldChangesView {
  return previous.state === "ready" && statusOf(error) === 410 ? previous : { state: "error", message: errorText(error) };
}

/** Whether the page is to ask again after steps, once it shows `view`. */
export function followsAfter(view: WorldChangesView): boolean {
  return view.state !== "none";
}
