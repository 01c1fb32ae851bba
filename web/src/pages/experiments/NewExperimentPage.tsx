// New experiment (/experiments/new, ?machine=<id> picks one): a ready machine of the team (with
// its GPU count), the repository and ref it clones, the command, how many GPUs it gets alone and
// the environment as KEY=VALUE lines. Starting clones and checks out on the machine before the
// answer comes, which takes seconds: the button counts them. A refusal shows beside the field it
// names (a command that fails at once: its exit code and the end of its log, beside the command,
// with a link to the failed experiment the platform keeps);
// once started, the page goes on to the experiment's own.
// data-testid: experiments-new-page, experiments-form, experiments-machine, experiments-repository,
// experiments-ref, experiments-command, experiments-gpus, experiments-env, experiments-submit,
// experiments-progress, experiments-<field>-error (machine, repository, ref, command, gpus, env),
// experiments-failed-link, experiments-form-error, experiments-no-machine, experiments-not-ready, experiments-machines-error.
import { type FormEvent, type ReactNode, useEffect, useMemo, useState } from "react";
import { Link, useNavigate, useSearchParams } from "react-router-dom";
import { experiments } from "../../api/experiments";
import { machines, type Machine } from "../../api/machines";
import { errorText } from "../../lib/errors";
import { ENV_EXAMPLE, parseEnvLines } from "../../lib/experiments/envLines";
import { experimentNamed, fieldOf, type FormField, machineChoices, notReady } from "../../lib/experiments/newExperiment";
import { useElapsed } from "../machines/useElapsed";
import "./experiments.css";

type Failure = { field: FormField | null; text: string };

export function NewExperimentPage() {
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const [listed, setListed] = useState<Machine[] | null>(null);
  const [listError, setListError] = useState<string | null>(null);
  const [machine, setMachine] = useState(params.get("machine") ?? "");
  const [repository, setRepository] = useState("");
  const [ref, setRef] = useState("");
  const [command, setCommand] = useState("");
  const [gpus, setGpus] = useState("0");
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
    if (!repository.trim()) return refuse("repository", "Give a git URL the machine can clone, e.g. https://github.com/acme/train.git (or a path on the machine).");
    if (!command.trim()) return refuse("command", "Give the command to run in the checkout, e.g. python train.py --epochs 3.");
    const gpuCount = Number(gpus);
    if (!Number.isInteger(gpuCount) || gpuCount < 0) return refuse("gpus", `A whole number of GPUs, 0 to ${chosen.gpus} on ${chosen.name}.`);
    const parsed = parseEnvLines(env);
    if (parsed.error !== null) return refuse("env", parsed.error);
    setBusy(true);
    setFailure(null);
    try {
      const made = await experiments.create({
        machine: chosen.id, repository: repository.trim(), ref: ref.trim(), command, gpus: gpuCount, env: parsed.env,
      });
      navigate(`/experiments/${encodeURIComponent(made.id)}`);
    } catch (e) {
      setFailure({ field: fieldOf(e), text: errorText(e) });
      setBusy(false);
    }
  }

  const beside = (field: FormField) => (failure?.field === field ? failure.text : null);
  const kept = failure?.field === "command" ? experimentNamed(failure.text) : null;
  const fieldProps = (field: FormField) => ({
    id: `experiments-${field}`, "data-testid": `experiments-${field}`, disabled: busy, spellCheck: false, autoComplete: "off",
    "aria-invalid": beside(field) ? true : undefined,
    "aria-describedby": beside(field) ? `experiments-${field}-error` : `experiments-${field}-hint`,
  });
  const edit = <T,>(set: (value: T) => void) => (value: T) => { set(value); setFailure(null); };
  const row = (field: FormField, label: ReactNode, input: ReactNode, hint: ReactNode) => (
    <div className={`field field-${field}`}>
      <label htmlFor={`experiments-${field}`}>{label}</label>
      {input}
      {beside(field) ? (
        <p id={`experiments-${field}-error`} className="error field-error" role="alert" data-testid={`experiments-${field}-error`}>
          {beside(field)}
          {field === "command" && kept ? <> <Link to={`/experiments/${kept}`} data-testid="experiments-failed-link">Open its log</Link></> : null}
        </p>
      ) : <p id={`experiments-${field}-hint`} className="muted field-hint">{hint}</p>}
    </div>
  );

  return (
    <div className="experiments-page" data-testid="experiments-new-page">
      <header>
        <p className="muted"><Link to="/experiments">Experiments</Link> /</p>
        <h1>New experiment</h1>
        <p className="muted">
          The machine clones the repository, checks out the ref and runs the command there, detached: closing this page or a
          dropped connection never stops it. Its output is the log you follow on the experiment's page.
        </p>
      </header>
      {listError ? <p className="error" role="alert" data-testid="experiments-machines-error">The machines could not be listed: {listError}</p> : null}
      {listed !== null && choices.length === 0 ? (
        <p className="experiments-empty" data-testid="experiments-no-machine">
          No ready machine: add one on the <Link to="/machines">Machines page</Link> first (or check the ones there again).
        </p>
      ) : null}
      <form className="experiments-panel experiments-form" data-testid="experiments-form" onSubmit={submit} noValidate>
        {row("machine", "Machine", (
          <select {...fieldProps("machine")} value={machine} onChange={(e) => edit(setMachine)(e.target.value)}>
            {listed === null ? <option value="">Loading…</option> : null}
            {choices.map((c) => <option key={c.id} value={c.id}>{c.label}</option>)}
          </select>
        ), waiting.length ? <span data-testid="experiments-not-ready">Not ready, so not offered: {waiting.join(", ")}.</span> : "Your team's ready machines.")}
        {row("repository", "Repository", (
          <input {...fieldProps("repository")} value={repository} placeholder="https://github.com/acme/train.git"
            onChange={(e) => edit(setRepository)(e.target.value)} />
        ), "A git URL the machine can clone (a private one with a token in the URL or a deploy key on the machine), or a path on the machine.")}
        {row("ref", <>Ref <span className="muted">(optional)</span></>, (
          <input {...fieldProps("ref")} value={ref} placeholder="main" onChange={(e) => edit(setRef)(e.target.value)} />
        ), "A branch, tag or commit; empty: the default branch.")}
        {row("command", "Command", (
          <textarea {...fieldProps("command")} value={command} rows={3} placeholder="python train.py --epochs 3"
            onChange={(e) => edit(setCommand)(e.target.value)} />
        ), <>Run by bash in the checkout, with <code>PLATFORM_URL</code>, <code>PLATFORM_TOKEN</code> and <code>CUDA_VISIBLE_DEVICES</code> set.</>)}
        {row("gpus", "GPUs", (
          <input {...fieldProps("gpus")} type="number" min={0} max={chosen?.gpus ?? undefined} step={1} value={gpus}
            inputMode="numeric" onChange={(e) => edit(setGpus)(e.target.value)} />
        ), chosen ? `Its own, of the ${chosen.gpus} on ${chosen.name}; 0: none.` : "How many of the machine's GPUs it gets alone.")}
        {row("env", <>Environment <span className="muted">(optional)</span></>, (
          <textarea {...fieldProps("env")} value={env} rows={3} placeholder={`${ENV_EXAMPLE}\nSEED=7`}
            onChange={(e) => edit(setEnv)(e.target.value)} />
        ), "One KEY=VALUE a line. The platform passes the values on and does not keep them.")}
        <div className="experiments-form-actions">
          <button type="submit" className="primary" data-testid="experiments-submit" disabled={busy || listed === null}>
            {busy ? "Starting…" : "Start experiment"}
          </button>
          {busy ? (
            <span className="muted" role="status" data-testid="experiments-progress">
              Cloning the repository on the machine and starting the command… {seconds >= 1 ? `${Math.floor(seconds)} s` : ""}
            </span>
          ) : null}
        </div>
        {failure && failure.field === null ? <p className="error" role="alert" data-testid="experiments-form-error">{failure.text}</p> : null}
      </form>
    </div>
  );
}
