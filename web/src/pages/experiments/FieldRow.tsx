// One field of the New experiment form: its label, the input, and below it the gateway's refusal
// when it names this field (role alert, the input's aria-describedby) or else the hint.
// A checkbox sits before its label. data-testid: experiments-<field>-error (the input's own
// is given by fieldProps).
import type { ReactNode } from "react";
import type { FormField } from "../../lib/experiments/newExperiment";

interface Props {
  field: FormField;
  label: ReactNode;
  error: ReactNode | null;
  hint: ReactNode;
  checkbox?: boolean;
  children: ReactNode;
}

export function FieldRow({ field, label, error, hint, checkbox = false, children }: Props) {
  const labelled = <label htmlFor={`experiments-${field}`}>{label}</label>;
  return (
    <div className={`field field-${field}${checkbox ? " field-checkbox" : ""}`}>
      {checkbox ? <span className="field-check">{children}{labelled}</span> : <>{labelled}{children}</>}
      {error ? (
        <p id={`experiments-${field}-error`} className="error field-error" role="alert" data-testid={`experiments-${field}-error`}>{error}</p>
      ) : <p id={`experiments-${field}-hint`} className="muted field-hint">{hint}</p>}
    </div>
  );
}

/** The input's props: id and data-testid experiments-<field>, described by its error or hint. */
export function fieldProps(field: FormField, error: boolean, disabled: boolean) {
  return {
    id: `experiments-${field}`, "data-testid": `experiments-${field}`, disabled, spellCheck: false, autoComplete: "off",
    "aria-invalid": error ? true : undefined,
    "aria-describedby": error ? `experiments-${field}-error` : `experiments-${field}-hint`,
  };
}
