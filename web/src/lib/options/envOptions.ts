// The Options dialog's logic: a form generated from a catalog entry's declared options
// (`GET /v0/envs` entries' `options`), turned into a session's kwargs, and the server's 422
// `field` matched back to the input it is about.
import type { components } from "../../api/schema";
import { isWorldChangesField } from "../worldChanges/timelineInput";

type EnvPublic = components["schemas"]["EnvPublic"];

/** One declared option, as the catalog lists it. */
export type EnvOption = components["schemas"]["EnvOptionPublic"];

/** The platform's own `endless` (every entry lists it; added here when an entry does not). */
export const ENDLESS_OPTION: EnvOption = {
  name: "endless",
  type: "bool",
  default: false,
  help: "No time limit; an episode that ends restarts in place.",
};

/** An entry's options, `endless` included. */
export function entryOptions(entry: EnvPublic): EnvOption[] {
  const declared = entry.options ?? [];
  return declared.some((o) => o.name === ENDLESS_OPTION.name) ? declared : [...declared, ENDLESS_OPTION];
}

/** What an input holds: text for numbers and strings, a flag for bool, the choice's JSON for choice,
 * the JSON array of the names picked for list. */
export type FieldValue = string | boolean;
export type FormValues = Record<string, FieldValue>;

/** The form's starting values: each option's default. */
export function defaultValues(options: readonly EnvOption[]): FormValues {
  return Object.fromEntries(options.map((o) => [o.name, fieldOf(o, o.default)]));
}

function fieldOf(option: EnvOption, value: unknown): FieldValue {
  if (option.type === "bool") return value === true;
  if (option.type === "list") return JSON.stringify(Array.isArray(value) ? value : []);
  if (option.type === "choice") return value === undefined || value === null ? "" : JSON.stringify(value);
  if (value === undefined || value === null) return "";
  return String(value);
}

/** The value an input holds as the kwarg it stands for; undefined when left empty. */
export function valueOf(option: EnvOption, field: FieldValue): unknown {
  if (option.type === "bool") return field === true;
  if (option.type === "list") return typeof field === "string" && field !== "" ? (JSON.parse(field) as unknown) : [];
  if (typeof field !== "string" || field.trim() === "") return undefined;
  if (option.type === "choice") return JSON.parse(field) as unknown;
  if (option.type === "int" || option.type === "float") {
    const number = Number(field);
    return Number.isNaN(number) ? field : number; // the server says what is wrong with text
  }
  return field;
}

/** The default's text for the form ("default 4", "default: the environment's own"). */
export function defaultText(option: EnvOption): string {
  if (option.default === undefined || option.default === null) return "default: the environment's own";
  return `default ${JSON.stringify(option.default)}`;
}

/** The range in words ("1 to 10", "at least 1"), or null. */
export function rangeText(option: EnvOption): string | null {
  const { minimum: lo, maximum: hi } = option;
  const has = (x: number | null | undefined): x is number => typeof x === "number";
  if (has(lo) && has(hi)) return `${lo} to ${hi}`;
  if (has(lo)) return `at least ${lo}`;
  if (has(hi)) return `at most ${hi}`;
  return null;
}

export interface KwargsResult {
  kwargs: Record<string, unknown>;
  /** The raw JSON field's problem, or null. */
  rawError: string | null;
}

/**
 * The kwargs to create the session with: each option whose value differs from its default,
 * then `edited` (kwargs from the dialog's own editors, e.g. world_changes), then the raw JSON
 * object's keys over them.
 */
export function buildKwargs(
  options: readonly EnvOption[],
  values: FormValues,
  raw: string,
  edited: Readonly<Record<string, unknown>> = {},
): KwargsResult {
  const kwargs: Record<string, unknown> = {};
  for (const option of options) {
    const value = valueOf(option, values[option.name] ?? fieldOf(option, option.default));
    if (value === undefined) continue;
    if (JSON.stringify(value) === JSON.stringify(option.default ?? null)) continue;
    kwargs[option.name] = value;
  }
  for (const [name, value] of Object.entries(edited)) if (value !== undefined) kwargs[name] = value;
  if (raw.trim() === "") return { kwargs, rawError: null };
  let extra: unknown;
  try {
    extra = JSON.parse(raw);
  } catch (e) {
    return { kwargs, rawError: `not JSON: ${(e as Error).message}` };
  }
  if (typeof extra !== "object" || extra === null || Array.isArray(extra)) {
    return { kwargs, rawError: 'kwargs must be a JSON object, e.g. {"endless": true}' };
  }
  return { kwargs: { ...kwargs, ...(extra as Record<string, unknown>) }, rawError: null };
}

/**
 * Where the form shows an error: beside an option, beside a session field, beside the world
 * changes editor, the raw JSON, or at the top.
 */
export type ErrorPlace = { option: string } | { session: string } | { worldChanges: true } | { raw: true } | { top: true };

/** Session fields of POST /v0/sessions the dialog has inputs for. */
export const SESSION_FIELDS = ["record", "record_frames"] as const;

/** The place of a 422's `field` ("kwargs.frameskip", "kwargs.world_changes[1].body", "record_frames", null). */
export function errorPlace(field: string | null | undefined, options: readonly EnvOption[]): ErrorPlace {
  if (!field) return { top: true };
  if (isWorldChangesField(field) && !options.some((o) => o.name === "world_changes")) return { worldChanges: true };
  const kwarg = /^kwargs\.([^.[\]]+)/.exec(field);
  if (kwarg) return options.some((o) => o.name === kwarg[1]) ? { option: kwarg[1] } : { raw: true };
  if (field === "kwargs") return { raw: true };
  const session = SESSION_FIELDS.find((f) => field === f || field.startsWith(`${f}.`));
  return session ? { session } : { top: true };
}
