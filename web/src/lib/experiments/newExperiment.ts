// The New experiment form's logic: the machines it offers (ready ones, with their GPUs), the
// request it sends (the code from a repository and ref, or from a folder of the platform's host),
// the field a refusal belongs beside (the gateway's `field`: "command", "folder", or "env.NAME"
// from its own validation; a machine not found is the machine's; one the chosen source does not
// show goes below the form), and the experiment a command that failed at once left behind (kept,
// failed, with its log).
import type { ApiError } from "../../api/client";
import type { ExperimentCreate } from "../../api/experiments";
import type { Machine } from "../../api/machines";

export type FormField = "machine" | "repository" | "ref" | "folder" | "command" | "gpus" | "share_gpus" | "env";
const FIELDS: readonly FormField[] = ["machine", "repository", "ref", "folder", "command", "gpus", "share_gpus", "env"];

/** Where the code comes from: a git repository the machine clones, or a folder of the platform's host uploaded. */
export type CodeSource = "repository" | "folder";

export interface FormValues {
  machine: string;
  source: CodeSource;
  repository: string;
  ref: string;
  folder: string;
  command: string;
  gpus: number;
  shareGpus: boolean;
  env: Record<string, string>;
}

/** The request: only the chosen source's fields (the other's empty, as the gateway wants: never both). */
export function createBody(form: FormValues): ExperimentCreate {
  const fromFolder = form.source === "folder";
  return {
    machine: form.machine, command: form.command, gpus: form.gpus, share_gpus: form.shareGpus, env: form.env,
    repository: fromFolder ? "" : form.repository.trim(), ref: fromFolder ? "" : form.ref.trim(),
    folder: fromFolder ? form.folder.trim() : "",
  };
}

/** Whether the form shows `field` for this source (repository and ref, or folder). */
export function fieldShown(field: FormField, source: CodeSource): boolean {
  if (field === "repository" || field === "ref") return source === "repository";
  if (field === "folder") return source === "folder";
  return true;
}

export interface MachineChoice {
  id: string;
  name: string;
  gpus: number;
  label: string;
}

/** The ready machines, as the picker lists them: "h100-box (2 GPUs)", "cpu-box (no GPU)". */
export function machineChoices(machines: readonly Machine[]): MachineChoice[] {
  return machines
    .filter((m) => m.status === "ready")
    .map((m) => {
      const gpus = (m.facts.gpus ?? []).length;
      const count = gpus === 0 ? "no GPU" : gpus === 1 ? "1 GPU" : `${gpus} GPUs`;
      return { id: m.id, name: m.name, gpus, label: `${m.name} (${count})` };
    });
}

/** The machines that are not ready, for the line that says why they are not offered. */
export function notReady(machines: readonly Machine[]): string[] {
  return machines.filter((m) => m.status !== "ready").map((m) => `${m.name} (${m.status})`);
}

/** The form field a refusal is about, or null (shown below the form). */
export function fieldOf(error: unknown): FormField | null {
  const failure = (error ?? {}) as Partial<ApiError>;
  const named = (failure.field ?? "").split(/[.[]/)[0];
  if ((FIELDS as readonly string[]).includes(named)) return named as FormField;
  if (failure.status === 404 && /machine/i.test(failure.detail ?? "")) return "machine";
  return null;
}

/** The id of the experiment a refusal names ("experiment x-0123456789ab on machine ...: the
 * command failed at once"), or null. */
export function experimentNamed(text: string): string | null {
  return /\bexperiment (x-[0-9a-f]{12})\b/.exec(text)?.[1] ?? null;
}
