// New experiment (/experiments/new, ?machine=<id> picks one): a ready machine of the team (with
// its GPU count), where the code comes from (a git repository and ref the machine clones, or a
// folder of the platform's host uploaded there), the command, how many GPUs it gets (alone, or
// shared with other experiments that share) and the environment as KEY=VALUE lines. Starting
// clones or uploads and starts it before the answer comes, which takes seconds: the button counts
// them. A refusal shows beside the field it names (FieldRow; a command that fails at once: its
// exit code and the end of its log, beside the command, with a link to the failed experiment the
// platform keeps); once made, started or queued behind busy GPUs, the page goes on to the
// experiment's own.
// data-testid: experiments-new-page, experiments-form, experiments-machine, experiments-source
// (-repository, -folder: the radios), experiments-repository, experiments-ref, experiments-folder,
// experiments-command, experiments-gpus, experiments-share_gpus, experiments-env,
// experiments-submit, experiments-progress, experiments-<field>-error (machine, repository, ref,
// folder, command, gpus, env), experiments-failed-link, experiments-form-error,
// experiments-no-machine, experiments-not-ready, experiments-machines-error.
import { type FormEvent, useEffect, useMemo, useState } from "react";
import { Link, useNavigate, useSearchParams } from "react-router-dom";
import { experiments } from "../../api/experiments";
import { machines, type Machine } from "../../api/machines";
import { errorText } from "../../lib/errors";
import { ENV_EXAMPLE, parseEnvLines } from "../../lib/experiments/envLines";
import {
  type CodeSource, createBody, experimentNamed, fieldOf, fieldShown, type FormField, machineChoices, notReady,
} from "../../lib/experiments/newExperiment";
import { useElapsed } from "../machines/useElapsed";
import { FieldRow, fieldProps } from "./FieldRow";
import "./experiments.css";

type Failure = { field: FormField | null; text: string };

export function NewExperimentPage() {
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const [listed, setListed] = useState<Machine[] | null>(null);
  const [listError, setListError] = useState<string | null>(null);
  const [machine, setMachine] = useState(params.get("machine") ?? "");
  const [source, setSource] = useState<CodeSource>("repository");
  const [repository, setRepository] = useState("");
  const [ref, setRef] = useState("");
  const [folder, setFolder] = useState("");
  const [command, setCommand] = useState("");
  const [gpus, setGpus] = useState("0");
  const [shareGpus, setShareGpus] = useState(false);
  const [env, setEnv] = useState("");
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<Failure | null>(null);
  const seconds = useElapsed(busy);

  useEffect(() => {
    machines.list().then(setListed, (e: unknown) => setListError(errorText(e)));
  }, []);
  const choices = useMemo(() => machineChoices(listed ?? []), [listed]);
  const waiting = useMemo(() => notReady(listed ?? []), [listed]);
  useEffect(() => {  // the machine asked for (?machine=), else the first ready one
    if (listed === null) return;
    if (!choices.some((c) => c.id === machine)) setMachine(choices[0]?.id ?? "");
  }, [listed, choices, machine]);
  const chosen = choices.find((c) => c.id === machine) ?? null;

  async function submit(event: FormEvent) {
    event.preventDefault();
    const refuse = (field: FormField, text: string) => setFailure({ field, text });
    if (!chosen) return refuse("machine", "Pick a ready machine (add one on the Machines page).");
    if (source === "repository" && !repository.trim()) return refuse("repository", "Give a git URL the machine can clone, e.g. https://github.com/acme/train.git (or a path on the machine).");
    if (source === "folder" && !folder.trim()) return refuse("folder", "Give the absolute path of a folder on the platform's host, e.g. /srv/code/train.");
    if (!command.trim()) return refuse("command", "Give the command to run in the checkout, e.g. python train.py --epochs 3.");
    const gpuCount = Number(gpus);
    if (!Number.isInteger(gpuCount) || gpuCount < 0) return refuse("gpus", `A whole number of GPUs, 0 to ${chosen.gpus} on ${chosen.name}.`);
    const parsed = parseEnvLines(env);
    if (parsed.error !== null) return refuse("env", parsed.error);
    setBusy(true);
    setFailure(null);
    try {
      const made = await experiments.create(createBody({
        machine: chosen.id, source, repository, ref, folder, command, gpus: gpuCount, shareGpus, env: parsed.env,
      }));
      navigate(`/experiments/${encodeURIComponent(made.id)}`);  // started or queued: its page says which
    } catch (e) {
      const field = fieldOf(e);
      setFailure({ field: field && fieldShown(field, source) ? field : null, text: errorText(e) });
      setBusy(false);
    }
  }

  const beside = (field: FormField) => (failure?.field === field ? failure.text : null);
  const kept = failure?.field === "command" ? experimentNamed(failure.text) : null;
  const props = (field: FormField) => fieldProps(field, beside(field) !== null, busy);
  const edit = <T,>(set: (value: T) => void) => (value: T) => { set(value); setFailure(null); };
  const error = (field: FormField) => beside(field) === null ? null : (
    <>{beside(field)}{field === "command" && kept ? <> <Link to={`/experiments/${kept}`} data-testid="experiments-failed-link">Open its log</Link></> : null}</>
  );

  return (
    <div className="experiments-page" data-testid="experiments-new-page">
      <header>
        <p className="muted"><Link to="/experiments">Experiments</Link> /</p>
        <h1>New experiment</h1>
        <p className="muted">
          The machine clones the repository and checks out the ref (or the platform uploads a folder of its host there) and
          runs the command, detached: closing this page or a dropped connection never stops it. Its output is the log you
          follow on the experiment's page. When its GPUs are busy it waits in the machine's queue and starts when they are free.
        </p>
      </header>
      {listError ? <p className="error" role="alert" data-testid="experiments-machines-error">The machines could not be listed: {listError}</p> : null}
      {listed !== null && choices.length === 0 ? (
        <p className="experiments-empty" data-testid="experiments-no-machine">
          No ready machine: add one on the <Link to="/machines">Machines page</Link> first (or check the ones there again).
        </p>
      ) : null}
      <form className="experiments-panel experiments-form" data-testid="experiments-form" onSubmit={submit} noValidate>
        <FieldRow field="machine" label="Machine" error={error("machine")}
          hint={waiting.length ? <span data-testid="experiments-not-ready">Not ready, so not offered: {waiting.join(", ")}.</span> : "Your team's ready machines."}>
          <select {...props("machine")} value={machine} onChange={(e) => edit(setMachine)(e.target.value)}>
            {listed === null ? <option value="">Loading…</option> : null}
            {choices.map((c) => <option key={c.id} value={c.id}>{c.label}</option>)}
          </select>
        </FieldRow>
        <fieldset className="experiments-source" data-testid="experiments-source" disabled={busy}>
          <legend>Code from</legend>
          {([["repository", "a git repository"], ["folder", "a folder of the platform's host"]] as const).map(([value, text]) => (
            <label key={value}>
              <input type="radio" name="experiments-source" value={value} checked={source === value}
                data-testid={`experiments-source-${value}`} onChange={() => edit(setSource)(value)} /> {text}
            </label>
          ))}
        </fieldset>
        {source === "repository" ? (
          <>
            <FieldRow field="repository" label="Repository" error={error("repository")}
              hint="A git URL the machine can clone (a private one with a token in the URL or a deploy key on the machine), or a path on the machine.">
              <input {...props("repository")} value={repository} placeholder="https://github.com/acme/train.git"
                onChange={(e) => edit(setRepository)(e.target.value)} />
            </FieldRow>
            <FieldRow field="ref" label={<>Ref <span className="muted">(optional)</span></>} error={error("ref")}
              hint="A branch, tag or commit; empty: the default branch.">
              <input {...props("ref")} value={ref} placeholder="main" onChange={(e) => edit(setRef)(e.target.value)} />
            </FieldRow>
          </>
        ) : (
          <FieldRow field="folder" label="Folder" error={error("folder")}
            hint={<>An absolute path on the platform's host, under the folders its operator allows
              (<code>PLATFORM_EXPERIMENTS_UPLOAD_ROOTS</code>): packed (a git work tree's <code>.gitignore</code> honoured,{" "}
              <code>.git</code> left out) and uploaded into the run folder's <code>checkout/</code>.</>}>
            <input {...props("folder")} value={folder} placeholder="/srv/code/train" onChange={(e) => edit(setFolder)(e.target.value)} />
          </FieldRow>
        )}
        <FieldRow field="command" label="Command" error={error("command")}
          hint={<>Run by bash in the checkout, with <code>PLATFORM_URL</code>, <code>PLATFORM_TOKEN</code> and <code>CUDA_VISIBLE_DEVICES</code> set.</>}>
          <textarea {...props("command")} value={command} rows={3} placeholder="python train.py --epochs 3"
            onChange={(e) => edit(setCommand)(e.target.value)} />
        </FieldRow>
        <FieldRow field="gpus" label="GPUs" error={error("gpus")}
          hint={`${chosen ? `Of the ${chosen.gpus} on ${chosen.name}` : "How many of the machine's GPUs it gets"}; 0: none. More than are free now: it waits in the machine's queue.`}>
          <input {...props("gpus")} type="number" min={0} max={chosen?.gpus ?? undefined} step={1} value={gpus}
            inputMode="numeric" onChange={(e) => edit(setGpus)(e.target.value)} />
        </FieldRow>
        <FieldRow field="share_gpus" checkbox label="Share GPUs with other experiments that share" error={error("share_gpus")}
          hint="It gets the least-loaded of the free GPUs and those other sharing experiments hold; never one an experiment holds alone. Unticked: its GPUs are its own.">
          <input {...props("share_gpus")} type="checkbox" checked={shareGpus} onChange={(e) => edit(setShareGpus)(e.target.checked)} />
        </FieldRow>
        <FieldRow field="env" label={<>Environment <span className="muted">(optional)</span></>} error={error("env")}
          hint="One KEY=VALUE a line. The platform passes the values on and does not keep them.">
          <textarea {...props("env")} value={env} rows={3} placeholder={`${ENV_EXAMPLE}\nSEED=7`}
            onChange={(e) => edit(setEnv)(e.target.value)} />
        </FieldRow>
        <div className="experiments-form-actions">
          <button type="submit" className="primary" data-testid="experiments-submit" disabled={busy || listed === null}>
            {busy ? "Starting…" : "Start experiment"}
          </button>
          {busy ? (
            <span className="muted" role="status" data-testid="experiments-progress">
              {source === "folder" ? "Uploading the folder to the machine" : "Cloning the repository on the machine"} and starting
              the command… {seconds >= 1 ? `${Math.floor(seconds)} s` : ""}
            </span>
          ) : null}
        </div>
        {failure && failure.field === null ? <p className="error" role="alert" data-testid="experiments-form-error">{failure.text}</p> : null}
      </form>
    </div>
  );
}
