// The New experiment form's environment: one KEY=VALUE a line, as in a .env file. Blank lines
// and lines starting with # are skipped; the value is everything after the first "=" (kept as
// typed, spaces and further "=" included). The browser refuses only what it cannot send as a
// name and a value (no "=", no name, a name given twice); the gateway judges the names (letters,
// digits and _, not starting with a digit; not one the platform sets) and answers a 422 on `env`.

export type EnvParse = { env: Record<string, string>; error: null } | { env: null; error: string };

export const ENV_EXAMPLE = "WANDB_MODE=offline";

export function parseEnvLines(text: string): EnvParse {
  const env: Record<string, string> = {};
  const lineOf = new Map<string, number>();
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i].replace(/\r$/, "");
    const number = i + 1;
    if (!line.trim() || line.trimStart().startsWith("#")) continue;
    const equals = line.indexOf("=");
    if (equals < 0) return { env: null, error: `Line ${number} ("${clip(line.trim())}") has no "=": write KEY=VALUE, e.g. ${ENV_EXAMPLE}.` };
    const name = line.slice(0, equals).trim();
    if (!name) return { env: null, error: `Line ${number} has no name before "=": write KEY=VALUE, e.g. ${ENV_EXAMPLE}.` };
    const earlier = lineOf.get(name);
    if (earlier !== undefined) return { env: null, error: `Line ${number} sets ${name} again (line ${earlier} sets it already): keep one.` };
    lineOf.set(name, number);
    env[name] = line.slice(equals + 1);
  }
  return { env, error: null };
}

function clip(text: string, most = 40): string {
  return text.length > most ? `${text.slice(0, most - 1)}…` : text;
}
