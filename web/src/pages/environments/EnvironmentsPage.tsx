// The Environments page (`/`, `?q=` search, `?family=` filter): the catalog's entries as cards
// with their preview, family and description; Start (the defaults) or Options… (the dialog).
//
// data-testid: env-search, env-family, env-count, env-list, env-card-<id>, preview-<id>,
// no-preview-<id>, family-<id>, start-<id>, options-<id>, start-error-<id>, envs-error; the
// dialog's are in components/play/OptionsDialog.tsx.
import { useEffect, useMemo, useState } from "react";
import { useNavigate, useSearchParams } from "react-router-dom";
import { api, must, type Schemas } from "../../api/client";
import { OptionsDialog } from "../../components/play/OptionsDialog";
import { createSession, sessionPath } from "../../components/play/sessions";
import { families, filterEntries } from "../../lib/catalog/catalog";
import { errorText } from "../../lib/errors";
import { EnvCard } from "./EnvCard";
import "./environments.css";

type Entry = Schemas["EnvPublic"];

export function EnvironmentsPage() {
  const [params, setParams] = useSearchParams();
  const query = params.get("q") ?? "";
  const family = params.get("family") || null;
  const navigate = useNavigate();
  const [entries, setEntries] = useState<Entry[] | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [optionsFor, setOptionsFor] = useState<Entry | null>(null);
  const [starting, setStarting] = useState<string | null>(null);
  const [startErrors, setStartErrors] = useState<Record<string, string>>({});

  useEffect(() => {
    let live = true;
    must(api.GET("/v0/envs"))
      .then((body) => { if (live) setEntries(body.data); })
      .catch((e: unknown) => { if (live) setLoadError(errorText(e)); });
    return () => { live = false; };
  }, []);

  const allFamilies = useMemo(() => families(entries ?? []), [entries]);
  const shown = useMemo(() => filterEntries(entries ?? [], query, family), [entries, query, family]);

  function setParam(name: string, value: string) {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    setParams(next, { replace: true });
  }

  async function start(entry: Entry) {
    setStarting(entry.id);
    setStartErrors(({ [entry.id]: _, ...rest }) => rest);
    try {
      const session = await createSession({ env_id: entry.id });
      navigate(sessionPath(session.id));
    } catch (e) {
      setStarting(null);
      setStartErrors((errors) => ({ ...errors, [entry.id]: errorText(e) }));
    }
  }

  return (
    <section className="environments">
      <h1>Environments</h1>
      <div className="env-filters" role="search">
        <label>
          <span>Search</span>
          <input type="search" data-testid="env-search" placeholder="name or description" value={query}
            onChange={(e) => setParam("q", e.target.value)} />
        </label>
        <label>
          <span>Family</span>
          <select data-testid="env-family" value={family ?? ""} onChange={(e) => setParam("family", e.target.value)}>
            <option value="">All families</option>
            {allFamilies.map((f) => <option key={f} value={f}>{f}</option>)}
          </select>
        </label>
        {entries ? <span className="muted" data-testid="env-count">{shown.length} of {entries.length}</span> : null}
      </div>
      {loadError ? <p className="error" role="alert" data-testid="envs-error">The catalog could not be read: {loadError}</p> : null}
      {entries === null && !loadError ? <p className="muted">Loading the catalog…</p> : null}
      {entries && shown.length === 0 ? <p className="muted">No environment matches.</p> : null}
      <ul className="env-list" data-testid="env-list">
        {shown.map((entry) => (
          <EnvCard key={entry.id} entry={entry} starting={starting === entry.id} disabled={starting !== null}
            error={startErrors[entry.id] ?? null} onStart={() => void start(entry)} onOptions={() => setOptionsFor(entry)} />
        ))}
      </ul>
      {optionsFor ? <OptionsDialog entry={optionsFor} onClose={() => setOptionsFor(null)} /> : null}
    </section>
  );
}
