// One catalog entry: its preview (loaded when on screen), family, description and buttons.
import type { Schemas } from "../../api/client";
import { familyOf } from "../../lib/catalog/catalog";
import { Preview } from "./Preview";

interface Props {
  entry: Schemas["EnvPublic"];
  starting: boolean;
  disabled: boolean;
  error: string | null;
  onStart: () => void;
  onOptions: () => void;
}

export function EnvCard({ entry, starting, disabled, error, onStart, onOptions }: Props) {
  const family = familyOf(entry);
  return (
    <li className="env-card" data-testid={`env-card-${entry.id}`}>
      <Preview id={entry.id} url={entry.preview} cached={entry.preview_cached} />
      <div className="env-text">
        <h2>{entry.id}</h2>
        <span className="env-family" data-testid={`family-${entry.id}`}>{family}</span>
        {entry.description ? <p>{entry.description}</p> : null}
      </div>
      <div className="env-buttons">
        <button type="button" className="primary" data-testid={`start-${entry.id}`} disabled={disabled} onClick={onStart}
          aria-label={`Start ${entry.id}`}>
          {starting ? "Starting…" : "Start"}
        </button>
        <button type="button" data-testid={`options-${entry.id}`} disabled={disabled} onClick={onOptions}
          aria-label={`Options for ${entry.id}`}>
          Options…
        </button>
      </div>
      {error ? <p className="error" role="alert" data-testid={`start-error-${entry.id}`}>{error}</p> : null}
    </li>
  );
}
