// The Recordings page's filters: environment, life and session, kept in the URL
// (?env_id=&life=&session_id=) so a filtered list can be linked to.
import { useEffect, useState } from "react";

export interface Filters {
  env_id: string;
  life: string;
  session_id: string;
}

export const FILTER_NAMES = ["env_id", "life", "session_id"] as const;

interface Props {
  filters: Filters;
  envIds: string[];
  onChange: (filters: Filters) => void;
}

export function RecordingFilters({ filters, envIds, onChange }: Props) {
  // Text fields apply after a pause in typing; the environment list applies at once.
  const [life, setLife] = useState(filters.life);
  const [session, setSession] = useState(filters.session_id);
  useEffect(() => setLife(filters.life), [filters.life]);
  useEffect(() => setSession(filters.session_id), [filters.session_id]);
  useEffect(() => {
    if (life.trim() === filters.life && session.trim() === filters.session_id) return;
    const timer = window.setTimeout(() => onChange({ ...filters, life: life.trim(), session_id: session.trim() }), 300);
    return () => window.clearTimeout(timer);
  }, [life, session, filters, onChange]);

  const envOptions = envIds.includes(filters.env_id) || filters.env_id === "" ? envIds : [filters.env_id, ...envIds];
  return (
    <form className="filters" role="search" onSubmit={(e) => {
      e.preventDefault();
      onChange({ ...filters, life: life.trim(), session_id: session.trim() });
    }}>
      <label>
        Environment
        <select data-testid="filter-env" value={filters.env_id} onChange={(e) => onChange({ ...filters, env_id: e.target.value })}>
          <option value="">all</option>
          {envOptions.map((id) => <option key={id} value={id}>{id}</option>)}
        </select>
      </label>
      <label>
        Life
        <input data-testid="filter-life" value={life} placeholder="any" onChange={(e) => setLife(e.target.value)} />
      </label>
      <label>
        Session
        <input data-testid="filter-session" value={session} placeholder="any" onChange={(e) => setSession(e.target.value)} />
      </label>
      {(filters.env_id || filters.life || filters.session_id) && (
        <button type="button" data-testid="filter-clear" onClick={() => onChange({ env_id: "", life: "", session_id: "" })}>
          Clear filters
        </button>
      )}
    </form>
  );
}
