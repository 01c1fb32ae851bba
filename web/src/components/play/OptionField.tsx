// One declared option as a form input: number (with its range), checkbox, select, a multiple
// select (list: the names picked, in the choices' order) or text, with its help, default and
// the server's error beside it.
// data-testid: option-<name> (the input), option-error-<name> (its error).
import { defaultText, type EnvOption, type FieldValue, rangeText } from "../../lib/options/envOptions";

interface Props {
  option: EnvOption;
  value: FieldValue;
  error: string | null;
  onChange: (value: FieldValue) => void;
}

export function OptionField({ option, value, error, onChange }: Props) {
  const id = `option-${option.name}`;
  const described = `${id}-help`;
  const range = rangeText(option);
  const common = {
    id,
    "data-testid": id,
    "aria-describedby": described,
    "aria-invalid": error ? true : undefined,
  };
  let input;
  if (option.type === "bool") {
    input = <input type="checkbox" {...common} checked={value === true} onChange={(e) => onChange(e.target.checked)} />;
  } else if (option.type === "choice") {
    input = (
      <select {...common} value={String(value)} onChange={(e) => onChange(e.target.value)}>
        {option.default === null || option.default === undefined ? <option value="">(the environment's own)</option> : null}
        {(option.choices ?? []).map((c) => {
          const json = JSON.stringify(c);
          return <option key={json} value={json}>{String(c)}</option>;
        })}
      </select>
    );
  } else if (option.type === "list") {
    const picked: unknown = typeof value === "string" && value ? JSON.parse(value) : [];
    input = (
      <select multiple size={6} {...common} value={Array.isArray(picked) ? picked.map(String) : []}
        onChange={(e) => onChange(JSON.stringify(Array.from(e.target.selectedOptions, (o) => o.value)))}>
        {(option.choices ?? []).map((c) => <option key={String(c)} value={String(c)}>{String(c)}</option>)}
      </select>
    );
  } else if (option.type === "int" || option.type === "float") {
    input = (
      <input type="number" {...common} value={String(value)} step={option.type === "int" ? 1 : "any"}
        min={option.minimum ?? undefined} max={option.maximum ?? undefined} onChange={(e) => onChange(e.target.value)} />
    );
  } else {
    input = <input type="text" {...common} value={String(value)} onChange={(e) => onChange(e.target.value)} />;
  }
  return (
    <div className={`option-field option-${option.type}`}>
      <label htmlFor={id}>{option.name}</label>
      {input}
      <div id={described} className="option-help muted">
        {option.help ? <span>{option.help} </span> : null}
        <span>({[option.type, range, defaultText(option)].filter(Boolean).join(", ")})</span>
      </div>
      {error ? <div className="error" role="alert" data-testid={`option-error-${option.name}`}>{error}</div> : null}
    </div>
  );
}
