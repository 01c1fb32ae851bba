// One field of the New eval form: its label, the input, and below it the gateway's refusal when
// it names this field (role alert, the input's aria-describedby) or else the hint.
// data-testid: evals-<field>-error (the input's own is given by evalFieldProps).
import type { ReactNode } from "react";

export const EVAL_FIELDS = ["task", "task_args", "model", "model_args", "machine", "limit", "epochs", "packages", "secrets"] as const;
export type EvalField = (typeof EVAL_FIELDS)[number];

export function EvalFieldRow({ field, label, error, hint, children }:
    { field: EvalField; label: ReactNode; error: string | null; hint: ReactNode; children: ReactNode }) {
  return (
    <div className={`field field-${field}`}>
      <label htmlFor={`evals-${field}`}>{label}</label>
      {children}
      {error ? (
        <p id={`evals-${field}-error`} className="error field-error" role="alert" data-testid={`evals-${field}-error`}>{error}</p>
      ) : <p id={`evals-${field}-hint`} className="muted field-hint">{hint}</p>}
    </div>
  );
}

export function evalFieldProps(field: EvalField, error: boolean, disabled: boolean) {
  return {
    id: `evals-${field}`, "data-testid": `evals-${field}`, disabled, spellCheck: false, autoComplete: "off",
    "aria-invalid": error ? true : undefined,
    "aria-describedby": error ? `evals-${field}-error` : `evals-${field}-hint`,
  };
}

/** The field a refusal is about (the gateway's `field`, "secrets.NAME" and "packages[0]" included; a
 * machine not found is the machine's), or null: shown below the form. */
export function evalFieldOf(error: unknown): EvalField | null {
  const failure = (error ?? {}) as { field?: string | null; status?: number; detail?: string };
  const named = (failure.field ?? "").split(/[.[]/)[0];
  if ((EVAL_FIELDS as readonly string[]).includes(named)) return named as EvalField;
  if (failure.status === 404 && /machine/i.test(failure.detail ?? "")) return "machine";
  return null;
}
