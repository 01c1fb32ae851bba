// The Episodes page (`/episodes?env_id=&outcome=&success=&sort=`): every finished episode of the
// team's recordings, across recordings (GET /v0/episodes), sortable and filterable by
// environment, outcome and success, with a one-click Failures filter; each row opens the Replay
// page at that episode. The filters live in the URL (lib/episodes/episodeQuery.ts); "More"
// fetches the next page.
//
// data-testids: episodes-page, episodes-filter-env, episodes-filter-outcome, episodes-filter-success,
// episodes-sort, episodes-failures (the toggle button), episodes-clear, episodes-count, episodes-error,
// episodes-empty, episodes-table, episode-row-<recording>-<index>, episode-open-<recording>-<index>,
// episodes-more; in each row the cells episode-env-, episode-return-, episode-length-, episode-ending-.
import { useCallback, useEffect, useMemo, useState } from "react";
import { Link, useSearchParams } from "react-router-dom";
import { api, must } from "../../api/client";
import {
  endingText, type EpisodeFilters, episodesQuery, filtersOf, type ListedEpisode, NO_FILTERS, replayLink, searchOf,
  showsFailures, SORTS, type SuccessFilter, toggleFailures,
} from "../../lib/episodes/episodeQuery";
import { errorText } from "../../lib/errors";
import { formatNumber } from "../../lib/format";
import "./episodes.css";

const PAGE = 100;

interface Listing {
  episodes: ListedEpisode[];
  total: number;
  outcomes: string[];
  next: string | null;
}

export function EpisodesPage() {
  const [params, setParams] = useSearchParams();
  const filters = useMemo(() => filtersOf(params), [params]);
  const [listing, setListing] = useState<Listing | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [envIds, setEnvIds] = useState<string[]>([]);
  const [loadingMore, setLoadingMore] = useState(false);

  const setFilters = useCallback((next: EpisodeFilters) => setParams(searchOf(next), { replace: true }), [setParams]);

  useEffect(() => {
    let live = true;
    must(api.GET("/v0/envs"))
      .then((envs) => { if (live) setEnvIds(envs.data.map((e) => e.id).sort()); })
      .catch(() => { /* the filter then lists only the environments of the episodes shown */ });
    return () => { live = false; };
  }, []);

  useEffect(() => {
    let live = true;
    setListing(null);
    must(api.GET("/v0/episodes", { params: { query: episodesQuery(filters, null, PAGE) } }))
      .then((body) => {
        if (!live) return;
        setListing({ episodes: body.data, total: body.total, outcomes: body.outcomes, next: body.next_cursor ?? null });
        setError(null);
      })
      .catch((e: unknown) => { if (live) { setListing({ episodes: [], total: 0, outcomes: [], next: null }); setError(errorText(e)); } });
    return () => { live = false; };
  }, [filters]);

  const more = async () => {
    if (!listing?.next) return;
    setLoadingMore(true);
    try {
      const body = await must(api.GET("/v0/episodes", { params: { query: episodesQuery(filters, listing.next, PAGE) } }));
      setListing({ ...listing, episodes: [...listing.episodes, ...body.data], next: body.next_cursor ?? null });
    } catch (e) {
      setError(errorText(e));
    } finally {
      setLoadingMore(false);
    }
  };

  const knownEnvs = useMemo(() => {
    const ids = new Set(envIds);
    for (const e of listing?.episodes ?? []) if (e.env_id) ids.add(e.env_id);
    if (filters.env_id) ids.add(filters.env_id);
    return [...ids].sort();
  }, [envIds, listing, filters.env_id]);
  const outcomes = useMemo(() => {
    const known = new Set(listing?.outcomes ?? []);
    if (filters.outcome) known.add(filters.outcome);
    return [...known].sort();
  }, [listing, filters.outcome]);
  const filtered = filters.env_id || filters.outcome || filters.success;
  const failures = showsFailures(filters);

  return (
    <section className="episodes-page" data-testid="episodes-page">
      <h1>Episodes</h1>
      <p className="muted">Every finished episode of your recordings. Open one to replay it.</p>
      <form className="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          Environment
          <select data-testid="episodes-filter-env" value={filters.env_id}
            onChange={(e) => setFilters({ ...filters, env_id: e.target.value })}>
            <option value="">all</option>
            {knownEnvs.map((id) => <option key={id} value={id}>{id}</option>)}
          </select>
        </label>
        <label>
          Outcome
          <select data-testid="episodes-filter-outcome" value={filters.outcome}
            onChange={(e) => setFilters({ ...filters, outcome: e.target.value })}>
            <option value="">any</option>
            {outcomes.map((o) => <option key={o} value={o}>{o}</option>)}
          </select>
        </label>
        <label>
          Success
          <select data-testid="episodes-filter-success" value={filters.success}
            onChange={(e) => setFilters({ ...filters, success: e.target.value as SuccessFilter })}>
            <option value="">any</option>
            <option value="true">succeeded</option>
            <option value="false">failed</option>
          </select>
        </label>
        <label>
          Sort
          <select data-testid="episodes-sort" value={filters.sort}
            onChange={(e) => setFilters({ ...filters, sort: e.target.value as EpisodeFilters["sort"] })}>
            {SORTS.map((s) => <option key={s.value} value={s.value}>{s.label}</option>)}
          </select>
        </label>
        <button type="button" data-testid="episodes-failures" aria-pressed={failures}
          className={failures ? "primary" : undefined} onClick={() => setFilters(toggleFailures(filters))}
          title="Episodes whose last step reported is_success false">
          Failures
        </button>
        {filtered ? (
          <button type="button" data-testid="episodes-clear" onClick={() => setFilters({ ...NO_FILTERS, sort: filters.sort })}>
            Clear filters
          </button>
        ) : null}
      </form>
      {error ? <p className="error" role="alert" data-testid="episodes-error">{error}</p> : null}
      {listing === null ? <p className="muted">Loading…</p> : listing.episodes.length === 0 && !error ? (
        <p className="muted" data-testid="episodes-empty">
          No episodes{filtered ? " match these filters" : " yet"}. Episodes are listed once a recorded session finishes them.
        </p>
      ) : listing.episodes.length > 0 ? (
        <>
          <p className="muted" data-testid="episodes-count">
            {listing.episodes.length < listing.total ? `${listing.episodes.length} of ` : ""}
            {listing.total} episode{listing.total === 1 ? "" : "s"}
          </p>
          <div className="table-scroll">
            <table className="episodes-table" data-testid="episodes-table">
              <thead>
                <tr>
                  <th scope="col">Episode</th>
                  <th scope="col">Environment</th>
                  <th scope="col">Recorded</th>
                  <th scope="col" className="num">Return</th>
                  <th scope="col" className="num">Length</th>
                  <th scope="col">Ending</th>
                  <th scope="col" className="num">Seed</th>
                </tr>
              </thead>
              <tbody>
                {listing.episodes.map((e) => <EpisodeRow key={`${e.recording_id}-${e.episode.index}`} listed={e} />)}
              </tbody>
            </table>
          </div>
          {listing.next ? (
            <button type="button" data-testid="episodes-more" disabled={loadingMore} onClick={() => void more()}>
              {loadingMore ? "Loading…" : `More (${listing.total - listing.episodes.length} left)`}
            </button>
          ) : null}
        </>
      ) : null}
    </section>
  );
}

function EpisodeRow({ listed }: { listed: ListedEpisode }) {
  const key = `${listed.recording_id}-${listed.episode.index}`;
  const entry = listed.episode as Record<string, unknown>;
  const ending = endingText(listed.episode);
  return (
    <tr data-testid={`episode-row-${key}`} className={entry.is_success === false ? "failed" : undefined}>
      <td>
        <Link to={replayLink(listed)} data-testid={`episode-open-${key}`} title="Replay this episode">
          <code className="nowrap">{listed.recording_id}</code> #{listed.episode.index}
        </Link>
      </td>
      <td data-testid={`episode-env-${key}`}>{listed.env_id ?? "–"}</td>
      <td className="nowrap">{listed.created_at ? new Date(listed.created_at).toLocaleString() : "–"}</td>
      <td className="num" data-testid={`episode-return-${key}`}>{formatNumber(entry.return as number | string | null | undefined)}</td>
      <td className="num" data-testid={`episode-length-${key}`}>{listed.episode.length ?? "–"}</td>
      <td data-testid={`episode-ending-${key}`}>{ending}</td>
      <td className="num">{listed.episode.seed ?? "–"}</td>
    </tr>
  );
}
