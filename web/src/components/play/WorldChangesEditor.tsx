// The Options dialog's world-changes editor: a JSON list of timeline entries sent as
// kwargs.world_changes, its shape checked in the browser (lib/worldChanges/timelineInput.ts) and
// the server's 422 about it (field kwargs.world_changes...) shown beside it.
// data-testid: option-world_changes (the textarea), option-error-world_changes (its error).
import { WORLD_CHANGE_KINDS, WORLD_CHANGES_EXAMPLE } from "../../lib/worldChanges/timelineInput";

interface Props {
  value: string;
  error: string | null;
  onChange: (value: string) => void;
}

export function WorldChangesEditor({ value, error, onChange }: Props) {
  return (
    <fieldset className="world-changes-editor">
      <legend>World changes</legend>
      <div className="option-field option-raw">
        <label htmlFor="option-world_changes">world_changes (JSON list, optional)</label>
        <textarea id="option-world_changes" data-testid="option-world_changes" rows={5} spellCheck={false}
          placeholder={WORLD_CHANGES_EXAMPLE} value={value} onChange={(e) => onChange(e.target.value)}
          aria-describedby="option-world_changes-help" aria-invalid={error ? true : undefined} />
        <div id="option-world_changes-help" className="option-help muted">
          A timeline the session follows without telling the agent: each change applies before the session's step
          {" "}<code>at</code> (counted across episodes) and lasts through resets; values are relative to the model as
          built. Kinds: {WORLD_CHANGE_KINDS.join(", ")}; add <code>"reveal": true</code> to put a change in that step's
          info. The session page and the replay list them.
        </div>
        {error ? <div className="error" role="alert" data-testid="option-error-world_changes">{error}</div> : null}
      </div>
    </fieldset>
  );
}
