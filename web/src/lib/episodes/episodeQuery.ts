// The episode browser's filters and sort, kept in the page's URL (?env_id=&outcome=&success=&sort=)
// and turned into the query of GET /v0/episodes; "failures" is success=false.
import type { Schemas } from "../../api/client";

export type ListedEpisode = Schemas["ListedEpisodePublic"];
export type EpisodeSort = "newest" | "oldest" | "return" | "-return" | "length" | "-length";
export type SuccessFilter = "" | "true" | "false";

export const SORTS: readonly { value: EpisodeSort; label: string }[] = [
  { value: "newest", label: "newest first" },
  { value: "oldest", label: "oldest first" },
  { value: "-return", label: "highest return" },
  { value: "return", label: "lowest return" },
  { value: "-length", label: "longest" },
  { value: "length", label: "shortest" },
];

export interface EpisodeFilters {
  env_id: string;
  outcome: string;
  success: SuccessFilter;
  sort: EpisodeSort;
}

export const NO_FILTERS: EpisodeFilters = { env_id: "", outcome: "", success: "", sort: "newest" };

function isSort(value: string | null): value is EpisodeSort {
  return SORTS.some((s) => s.value === value);
}

/** The filters a URL's search params hold (unknown values fall back to "any" and "newest"). */
export function filtersOf(params: URLSearchParams): EpisodeFilters {
  const success = params.get("success");
  const sort = params.get("sort");
  return {
    env_id: params.get("env_id") ?? "",
    outcome: params.get("outcome") ?? "",
    success: success === "true" || success === "false" ? success : "",
    sort: isSort(sort) ? sort : "newest",
  };
}

/** The search params of the filters: only those set, so the plain page's URL stays /episodes. */
export function searchOf(filters: EpisodeFilters): URLSearchParams {
  const search = new URLSearchParams();
  if (filters.env_id) search.set("env_id", filters.env_id);
  if (filters.outcome) search.set("outcome", filters.outcome);
  if (filters.success) search.set("success", filters.success);
  if (filters.sort !== "newest") search.set("sort", filters.sort);
  return search;
}

/** The query of GET /v0/episodes for the filters and a page's cursor. */
export function episodesQuery(filters: EpisodeFilters, cursor: string | null, limit: number) {
  return {
    env_id: filters.env_id || undefined,
    outcome: filters.outcome || undefined,
    success: filters.success === "" ? undefined : filters.success === "true",
    sort: filters.sort,
    limit,
    cursor: cursor ?? undefined,
  };
}

/** Whether the "Failures" filter is the one on: unsuccessful episodes, any outcome. */
export function showsFailures(filters: EpisodeFilters): boolean {
  return filters.success === "false";
}

/** The filters with "Failures" toggled. */
export function toggleFailures(filters: EpisodeFilters): EpisodeFilters {
  return { ...filters, success: showsFailures(filters) ? "" : "false" };
}

/** The Replay page at this episode. */
export function replayLink(listed: Pick<ListedEpisode, "recording_id" | "episode">): string {
  return `/recordings/${encodeURIComponent(listed.recording_id)}?episode=${listed.episode.index}`;
}

/** How an episode ended, in a word: its outcome when it reports one, else success, failure,
 * terminated, truncated, or "–" when the entry says nothing. */
export function endingText(episode: ListedEpisode["episode"]): string {
  const entry = episode as Record<string, unknown>;
  const outcome = typeof entry.outcome === "string" && entry.outcome ? entry.outcome : null;
  const success = entry.is_success;
  const base = success === true ? "success" : success === false ? "failure" : null;
  if (outcome && base) return `${base} (${outcome})`;
  if (outcome ?? base) return (outcome ?? base) as string;
  if (entry.terminated === true) return "terminated";
  if (entry.truncated === true) return "truncated";
  return "–";
}
