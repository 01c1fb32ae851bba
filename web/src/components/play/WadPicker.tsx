// The Options dialog's WAD picker for Doom entries: none (the scenario's own map) or an
// uploaded WAD (GET /v0/doom/wads) and one of its maps; a file input uploads a WAD
// (POST /v0/doom/wads, the file as the body) and picks it.
// data-testid: wad-picker, wad-select, wad-map, wad-upload (the file input), wad-upload-status,
// wad-error.
import { useEffect, useState } from "react";
import { api, apiError, must } from "../../api/client";
import { errorText } from "../../lib/errors";
import { pickWad, uploadProblem, type Wad, type WadChoice, withWad } from "../../lib/doom/wadChoice";
import { authFetch } from "../../lib/auth/token";

interface Props {
  choice: WadChoice;
  onChange: (choice: WadChoice) => void;
}

async function uploadWad(file: File): Promise<Wad> {
  const response = await authFetch(`/v0/doom/wads?name=${encodeURIComponent(file.name)}`, {
    method: "POST",
    body: file,
    headers: { "Content-Type": "application/octet-stream" },
  });
  const body: unknown = await response.json().catch(() => null);
  if (!response.ok) throw apiError(response, body);
  return body as Wad;
}

export function WadPicker({ choice, onChange }: Props) {
  const [wads, setWads] = useState<Wad[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    must(api.GET("/v0/doom/wads")).then((list) => { if (live) setWads(list.wads); })
      .catch((e: unknown) => { if (live) setError(`the uploaded WADs cannot be listed: ${errorText(e)}`); });
    return () => { live = false; };
  }, []);

  async function upload(file: File | undefined) {
    if (!file) return;
    const problem = uploadProblem(file);
    if (problem) {
      setError(problem);
      return;
    }
    setError(null);
    setStatus(`uploading ${file.name} (${Math.ceil(file.size / 1024)} kB)…`);
    try {
      const wad = await uploadWad(file);
      const next = withWad(wads, wad);
      setWads(next);
      onChange(pickWad(next, wad.id));
      setStatus(`${wad.name}: ${wad.maps.length} map${wad.maps.length === 1 ? "" : "s"} (${wad.id})`);
    } catch (e) {
      setStatus(null);
      setError(errorText(e));
    }
  }

  const picked = wads.find((w) => w.id === choice.wad);
  return (
    <fieldset data-testid="wad-picker">
      <legend>Map</legend>
      <div className="option-field">
        <label htmlFor="wad-select">WAD</label>
        <select id="wad-select" data-testid="wad-select" value={choice.wad ?? ""}
          onChange={(e) => onChange(pickWad(wads, e.target.value || null))}>
          <option value="">(the scenario's own map)</option>
          {wads.map((w) => <option key={w.id} value={w.id}>{w.name} ({w.id})</option>)}
        </select>
        <div className="option-help muted">Play a map of an uploaded WAD on top of Freedoom (kwargs wad and doom_map).</div>
      </div>
      {picked ? (
        <div className="option-field">
          <label htmlFor="wad-map">map</label>
          <select id="wad-map" data-testid="wad-map" value={choice.map ?? ""}
            onChange={(e) => onChange({ ...choice, map: e.target.value })}>
            {picked.maps.map((m) => <option key={m} value={m}>{m}</option>)}
          </select>
        </div>
      ) : null}
      <div className="option-field">
        <label htmlFor="wad-upload">upload a WAD</label>
        <input id="wad-upload" data-testid="wad-upload" type="file" accept=".wad,.WAD"
          onChange={(e) => { void upload(e.target.files?.[0]); e.target.value = ""; }} />
        <div className="option-help muted">At most 20 MB; every user of this platform sees it.</div>
        {status ? <div className="option-help muted" data-testid="wad-upload-status">{status}</div> : null}
        {error ? <div className="error" role="alert" data-testid="wad-error">{error}</div> : null}
      </div>
    </fieldset>
  );
}
