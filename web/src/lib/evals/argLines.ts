// The New eval form's task and model arguments: one name=value a line (Inspect's `-T` and `-M`),
// read into the JSON object the gateway takes. Blank lines and lines starting with # are skipped.
// A value that is JSON (a number, true/false, null, a list, an object, a quoted string) is sent
// as that; anything else as the text typed (`difficulty=hard` -> "hard").
import { parseEnvLines } from "../experiments/envLines";

export type ArgsParse = { args: Record<string, unknown>; error: null } | { args: null; error: string };

export function parseArgLines(text: string): ArgsParse {
  const parsed = parseEnvLines(text);
  if (parsed.error !== null) return { args: null, error: parsed.error.replace(/KEY=VALUE, e\.g\. \S+/g, "name=value, e.g. limit=5") };
  const args: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(parsed.env)) args[name.trim()] = jsonOrText(raw.trim());
  return { args, error: null };
}

function jsonOrText(value: string): unknown {
  if (value === "") return "";
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/** Secrets from the form's rows: named ones only (a row without a name and value is skipped);
 * an error names a row with a value but no name, or a name given twice. */
export function secretsOf(rows: readonly { name: string; value: string }[]):
    { secrets: Record<string, string>; error: null } | { secrets: null; error: string } {
  const secrets: Record<string, string> = {};
  for (let i = 0; i < rows.length; i += 1) {
    const name = rows[i].name.trim();
    if (!name && !rows[i].value) continue;
    if (!name) return { secrets: null, error: `Secret ${i + 1} has a value but no name: give its variable's name, e.g. OPENAI_API_KEY.` };
    if (name in secrets) return { secrets: null, error: `${name} is given twice: keep one.` };
    secrets[name] = rows[i].value;
  }
  return { secrets, error: null };
}
