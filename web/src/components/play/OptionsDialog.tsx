// The Options dialog of a catalog entry: one input per declared option (entry.options, with
// `endless`), a world-changes editor (kwargs.world_changes, WorldChangesEditor), recording
// on/off with frames, and raw JSON kwargs merged over the fields; Start creates the session and
// opens its page. A 422 shows the server's message next to the field its `field` names
// (kwargs.<name> -> that option, kwargs.world_changes... -> the editor), else at the top.
//
// data-testid: options-dialog, option-<name> and option-error-<name> (each option; also
// option-record, option-record_frames, option-world_changes, option-raw with option-raw-help
// (whether the entry takes kwargs it does not list: free_kwargs),
// option-error-world_changes, option-error-raw), options-error (top), options-start, options-cancel;
// Doom entries add the WAD picker (WadPicker: wad-*).
import { type FormEvent, useEffect, useMemo, useRef, useState } from "react";
import { useNavigate } from "react-router-dom";
import type { ApiError, Schemas } from "../../api/client";
import { errorText } from "../../lib/errors";
import { buildKwargs, defaultValues, entryOptions, errorPlace, type FormValues } from "../../lib/options/envOptions";
import { parseWorldChanges, WORLD_CHANGES } from "../../lib/worldChanges/timelineInput";
import { NO_WAD, type WadChoice, wadKwargs } from "../../lib/doom/wadChoice";
import { OptionField } from "./OptionField";
import { WadPicker } from "./WadPicker";
import { WorldChangesEditor } from "./WorldChangesEditor";
import { createSession, sessionPath } from "./sessions";

interface Props {
  entry: Schemas["EnvPublic"];
  onClose: () => void;
}

interface Errors {
  top: string | null;
  raw: string | null;
  worldChanges: string | null;
  options: Record<string, string>;
  session: Record<string, string>;
}

const NO_ERRORS: Errors = { top: null, raw: null, worldChanges: null, options: {}, session: {} };

export function OptionsDialog({ entry, onClose }: Props) {
  const dialog = useRef<HTMLDialogElement>(null);
  const navigate = useNavigate();
  const options = useMemo(() => entryOptions(entry), [entry]);
  const [values, setValues] = useState<FormValues>(() => defaultValues(options));
  const [record, setRecord] = useState(false);
  const [recordFrames, setRecordFrames] = useState(false);
  const [raw, setRaw] = useState("");
  const [worldChanges, setWorldChanges] = useState("");
  const [wad, setWad] = useState<WadChoice>(NO_WAD);
  const isDoom = entry.family === "Doom";
  const [errors, setErrors] = useState<Errors>(NO_ERRORS);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const element = dialog.current;
    if (element && !element.open) element.showModal();
    return () => element?.close();
  }, []);

  useEffect(() => {
    // The first field with an error gets the focus (and scrolls into view).
    const name = Object.keys(errors.options)[0] ?? Object.keys(errors.session)[0];
    const id = name ? `option-${name}` : errors.worldChanges ? "option-world_changes" : errors.raw ? "option-raw" : null;
    if (id) document.getElementById(id)?.focus();
    else if (errors.top) dialog.current?.querySelector<HTMLElement>("[data-testid=options-error]")?.scrollIntoView({ block: "nearest" });
  }, [errors]);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const timeline = parseWorldChanges(worldChanges);
    if (!timeline.ok) {
      setErrors({ ...NO_ERRORS, worldChanges: timeline.error });
      return;
    }
    const { kwargs, rawError } = buildKwargs(options, values, raw, { [WORLD_CHANGES]: timeline.value, ...wadKwargs(wad) });
    if (rawError) {
      setErrors({ ...NO_ERRORS, raw: rawError });
      return;
    }
    setErrors(NO_ERRORS);
    setBusy(true);
    try {
      const session = await createSession({ env_id: entry.id, kwargs, record, record_frames: record && recordFrames });
      navigate(sessionPath(session.id));
    } catch (e) {
      setBusy(false);
      const failure = e as Partial<ApiError>;
      const message = errorText(e);
      const place = failure.status === 422 ? errorPlace(failure.field, options) : { top: true as const };
      if ("option" in place) setErrors({ ...NO_ERRORS, options: { [place.option]: message } });
      else if ("session" in place) setErrors({ ...NO_ERRORS, session: { [place.session]: message } });
      else if ("worldChanges" in place) setErrors({ ...NO_ERRORS, worldChanges: message });
      else if ("raw" in place) setErrors({ ...NO_ERRORS, raw: message });
      else setErrors({ ...NO_ERRORS, top: message });
    }
  }

  return (
    <dialog ref={dialog} className="options-dialog" data-testid="options-dialog" aria-labelledby="options-title"
      onCancel={(e) => { e.preventDefault(); onClose(); }}>
      <form noValidate onSubmit={submit}>
        <h2 id="options-title">Start {entry.id}</h2>
        {entry.description ? <p className="muted">{entry.description}</p> : null}
        {errors.top ? <p className="error" role="alert" data-testid="options-error">{errors.top}</p> : null}
        <fieldset>
          <legend>Environment options</legend>
          {options.map((option) => (
            <OptionField key={option.name} option={option} value={values[option.name]} error={errors.options[option.name] ?? null}
              onChange={(value) => setValues((v) => ({ ...v, [option.name]: value }))} />
          ))}
        </fieldset>
        {isDoom ? <WadPicker choice={wad} onChange={setWad} /> : null}
        <WorldChangesEditor value={worldChanges} error={errors.worldChanges} onChange={setWorldChanges} />
        <fieldset>
          <legend>Recording</legend>
          <div className="option-field">
            <label htmlFor="option-record">record</label>
            <input id="option-record" data-testid="option-record" type="checkbox" checked={record}
              onChange={(e) => setRecord(e.target.checked)} />
            <div className="option-help muted">Record every step (Recordings page; play it back later).</div>
            {errors.session.record ? <div className="error" role="alert" data-testid="option-error-record">{errors.session.record}</div> : null}
          </div>
          <div className="option-field">
            <label htmlFor="option-record_frames">record frames</label>
            <input id="option-record_frames" data-testid="option-record_frames" type="checkbox" checked={record && recordFrames}
              disabled={!record} onChange={(e) => setRecordFrames(e.target.checked)} />
            <div className="option-help muted">Keep the picture of every step in the recording.</div>
            {errors.session.record_frames ? <div className="error" role="alert" data-testid="option-error-record_frames">{errors.session.record_frames}</div> : null}
          </div>
        </fieldset>
        <div className="option-field option-raw">
          <label htmlFor="option-raw">more kwargs (JSON, over the fields)</label>
          <textarea id="option-raw" data-testid="option-raw" rows={3} spellCheck={false} placeholder='{"endless": true}'
            value={raw} onChange={(e) => setRaw(e.target.value)} aria-invalid={errors.raw ? true : undefined} />
          <div className="option-help muted" data-testid="option-raw-help">
            {entry.free_kwargs
              ? "This environment also takes kwargs not listed above (its catalog entry has free_kwargs)."
              : "Only the options above: this environment refuses any other kwarg."}
          </div>
          {errors.raw ? <div className="error" role="alert" data-testid="option-error-raw">{errors.raw}</div> : null}
        </div>
        <div className="dialog-buttons">
          <button type="button" data-testid="options-cancel" onClick={onClose}>Cancel</button>
          <button type="submit" className="primary" data-testid="options-start" disabled={busy}>{busy ? "Starting…" : "Start"}</button>
        </div>
      </form>
    </dialog>
  );
}
