// New eval (/evals/new, ?machine=<id> and ?task=<name> prefill): an Inspect task (its registry
// name) and its arguments as name=value lines, the model and its arguments, a ready machine, the
// first N samples and the epochs, more packages for its environment (a model API or a task
// package), and secrets (provider keys) as name and value rows whose values are password fields:
// sent once to the eval's process, never shown again (the platform keeps their names only).
// Starting checks the task against the machine and starts it (seconds); a refusal shows beside
// the field the gateway names; once made, the page goes on to the eval's own.
// data-testid: evals-new-page, evals-form, evals-task, evals-task_args, evals-model,
// evals-model_args, evals-machine, evals-limit, evals-epochs, evals-packages,
// evals-secret-name, evals-secret-value, evals-secret-add, evals-submit, evals-<field>-error,
// evals-form-error, evals-no-machine.
import { type FormEvent, useEffect, useMemo, useState } from "react";
import { Link, useNavigate, useSearchParams } from "react-router-dom";
import { evals } from "../../api/evals";
import { machines, type Machine } from "../../api/machines";
import { errorText } from "../../lib/errors";
import { parseArgLines, secretsOf } from "../../lib/evals/argLines";
import { machineChoices } from "../../lib/experiments/newExperiment";
import { EvalFieldRow, type EvalField, evalFieldOf, evalFieldProps } from "./EvalField";
import "../experiments/experiments.css";
import "./evals.css";

type Failure = { field: EvalField | null; text: string };
type Secret = { name: string; value: string };

export function NewEvalPage() {
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const [listed, setListed] = useState<Machine[] | null>(null);
  const [task, setTask] = useState(params.get("task") ?? "");
  const [taskArgs, setTaskArgs] = useState("");
  const [model, setModel] = useState("");
  const [modelArgs, setModelArgs] = useState("");
  const [machine, setMachine] = useState(params.get("machine") ?? "");
  const [limit, setLimit] = useState("0");
  const [epochs, setEpochs] = useState("0");
  const [packages, setPackages] = useState("");
  const [secrets, setSecrets] = useState<Secret[]>([{ name: "", value: "" }]);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<Failure | null>(null);

  useEffect(() => {
    machines.list().then(setListed, (e: unknown) => setFailure({ field: "machine", text: `The machines could not be listed: ${errorText(e)}` }));
  }, []);
  const choices = useMemo(() => machineChoices(listed ?? []), [listed]);
  useEffect(() => {
    if (listed !== null && !choices.some((c) => c.id === machine)) setMachine(choices[0]?.id ?? "");
  }, [listed, choices, machine]);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const refuse = (field: EvalField, text: string) => setFailure({ field, text });
    if (!task.trim()) return refuse("task", "Give the task's registry name, e.g. inspect_evals/gpqa_diamond.");
    if (!model.trim()) return refuse("model", "Give the model as provider/model, e.g. openai/gpt-4o-mini.");
    if (!machine) return refuse("machine", "Pick a ready machine (add one on the Machines page).");
    const tArgs = parseArgLines(taskArgs);
    if (tArgs.error !== null) return refuse("task_args", tArgs.error);
    const mArgs = parseArgLines(modelArgs);
    if (mArgs.error !== null) return refuse("model_args", mArgs.error);
    const numbers = { limit: Number(limit), epochs: Number(epochs) };
    for (const [field, value] of Object.entries(numbers)) {
      if (!Number.isInteger(value) || value < 0) return refuse(field as EvalField, "A whole number, 0 or more (0: the task's own).");
    }
    const given = secretsOf(secrets);
    if (given.error !== null) return refuse("secrets", given.error);
    setBusy(true);
    setFailure(null);
    try {
      const made = await evals.create({
        task: task.trim(), task_args: tArgs.args, model: model.trim(), model_args: mArgs.args, machine,
        limit: numbers.limit, epochs: numbers.epochs, gpus: 0, secrets: given.secrets,
        packages: packages.split("\n").map((line) => line.trim()).filter(Boolean),
      });
      navigate(`/evals/${encodeURIComponent(made.id)}`);
    } catch (e) {
      setFailure({ field: evalFieldOf(e), text: errorText(e) });
      setBusy(false);
    }
  }

  const beside = (field: EvalField) => (failure?.field === field ? failure.text : null);
  const props = (field: EvalField) => evalFieldProps(field, beside(field) !== null, busy);
  const edit = <T,>(set: (value: T) => void) => (value: T) => { set(value); setFailure(null); };
  const setSecret = (index: number, part: keyof Secret, value: string) =>
    edit(setSecrets)(secrets.map((s, i) => (i === index ? { ...s, [part]: value } : s)));

  return (
    <div className="evals-page" data-testid="evals-new-page">
      <header>
        <p className="muted"><Link to="/evals">Evals</Link> /</p>
        <h1>New eval</h1>
        <p className="muted">
          Runs an Inspect task against a model on one of your machines: a virtual environment there with pinned Inspect and
          inspect_evals and the model provider's package, then the eval, detached. A task that needs what the machine lacks (a
          Docker sandbox, GPUs) is refused before anything runs.
        </p>
      </header>
      {listed !== null && choices.length === 0 ? (
        <p className="experiments-empty" data-testid="evals-no-machine">
          No ready machine: add one on the <Link to="/machines">Machines page</Link> first.
        </p>
      ) : null}
      <form className="experiments-panel experiments-form" data-testid="evals-form" onSubmit={submit} noValidate>
        <EvalFieldRow field="task" label="Task" error={beside("task")} hint={<>Its registry name, as <code>inspect eval</code> takes it: <code>package/task</code>.</>}>
          <input {...props("task")} value={task} placeholder="inspect_evals/gpqa_diamond" onChange={(e) => edit(setTask)(e.target.value)} />
        </EvalFieldRow>
        <EvalFieldRow field="task_args" label={<>Task arguments <span className="muted">(optional)</span></>} error={beside("task_args")}
          hint={<>One <code>name=value</code> a line (Inspect's <code>-T</code>); a JSON value is sent as JSON.</>}>
          <textarea {...props("task_args")} value={taskArgs} rows={2} placeholder="cot=true" onChange={(e) => edit(setTaskArgs)(e.target.value)} />
        </EvalFieldRow>
        <EvalFieldRow field="model" label="Model" error={beside("model")} hint={<><code>provider/model</code>; the provider's package is installed.</>}>
          <input {...props("model")} value={model} placeholder="openai/gpt-4o-mini" onChange={(e) => edit(setModel)(e.target.value)} />
        </EvalFieldRow>
        <EvalFieldRow field="model_args" label={<>Model arguments <span className="muted">(optional)</span></>} error={beside("model_args")}
          hint={<>One <code>name=value</code> a line (Inspect's <code>-M</code>).</>}>
          <textarea {...props("model_args")} value={modelArgs} rows={2} onChange={(e) => edit(setModelArgs)(e.target.value)} />
        </EvalFieldRow>
        <EvalFieldRow field="machine" label="Machine" error={beside("machine")} hint="Your team's ready machines.">
          <select {...props("machine")} value={machine} onChange={(e) => edit(setMachine)(e.target.value)}>
            {listed === null ? <option value="">Loading…</option> : null}
            {choices.map((c) => <option key={c.id} value={c.id}>{c.label}</option>)}
          </select>
        </EvalFieldRow>
        <EvalFieldRow field="limit" label="Limit" error={beside("limit")} hint="The first N samples; 0: all.">
          <input {...props("limit")} type="number" min={0} step={1} value={limit} onChange={(e) => edit(setLimit)(e.target.value)} />
        </EvalFieldRow>
        <EvalFieldRow field="epochs" label="Epochs" error={beside("epochs")} hint="Times each sample runs; 0: the task's default.">
          <input {...props("epochs")} type="number" min={0} step={1} value={epochs} onChange={(e) => edit(setEpochs)(e.target.value)} />
        </EvalFieldRow>
        <EvalFieldRow field="packages" label={<>More packages <span className="muted">(optional)</span></>} error={beside("packages")}
          hint="One pip requirement a line: a model API or a task package (name==version, an https:// or git+https:// URL, or an absolute path on the machine).">
          <textarea {...props("packages")} value={packages} rows={2} onChange={(e) => edit(setPackages)(e.target.value)} />
        </EvalFieldRow>
        <fieldset className="field field-secrets" disabled={busy}>
          <legend>Secrets <span className="muted">(optional)</span></legend>
          {secrets.map((secret, i) => (
            <div className="evals-secret-row" key={i}>
              <input aria-label={`Secret ${i + 1} name`} data-testid="evals-secret-name" id={i === 0 ? "evals-secrets" : undefined}
                value={secret.name} placeholder="OPENAI_API_KEY" spellCheck={false} autoComplete="off"
                aria-invalid={beside("secrets") ? true : undefined} onChange={(e) => setSecret(i, "name", e.target.value)} />
              {/* uncontrolled: the value stays the input's own, never written into the page as an attribute */}
              <input aria-label={`Secret ${i + 1} value`} data-testid="evals-secret-value" type="password" defaultValue=""
                autoComplete="new-password" onChange={(e) => setSecret(i, "value", e.target.value)} />
            </div>
          ))}
          <button type="button" data-testid="evals-secret-add" onClick={() => setSecrets([...secrets, { name: "", value: "" }])}>Add a secret</button>
          {beside("secrets") ? (
            <p className="error field-error" role="alert" data-testid="evals-secrets-error">{beside("secrets")}</p>
          ) : (
            <p className="muted field-hint">Variables for the eval's process only (provider keys): never stored, logged or shown again.</p>
          )}
        </fieldset>
        <div className="experiments-form-actions">
          <button type="submit" className="primary" data-testid="evals-submit" disabled={busy || listed === null}>
            {busy ? "Starting…" : "Start eval"}
          </button>
          {busy ? <span className="muted" role="status">Checking the task against the machine and starting it…</span> : null}
        </div>
        {failure && failure.field === null ? <p className="error" role="alert" data-testid="evals-form-error">{failure.text}</p> : null}
      </form>
    </div>
  );
}
