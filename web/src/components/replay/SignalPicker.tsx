// Which observation and action charts the replay plots, when there are more than a few: one
// checkbox per chart, grouped by observation and action, with "all" and "none".
// data-testid: signal-picker, signal-toggle-<group id>, signal-all, signal-none.
import type { SignalGroup, SignalKind } from "../../lib/replay/signals";
import { testIdPart } from "../../lib/replay/plotData";

interface Props {
  groups: readonly SignalGroup[];
  shown: ReadonlySet<string>;
  onShown: (shown: ReadonlySet<string>) => void;
}

const KINDS: [SignalKind, string][] = [["observation", "Observation"], ["action", "Action"]];

export function SignalPicker({ groups, shown, onShown }: Props) {
  const toggle = (id: string, on: boolean) => {
    const next = new Set(shown);
    if (on) next.add(id);
    else next.delete(id);
    onShown(next);
  };
  return (
    <fieldset className="signal-picker" data-testid="signal-picker">
      <legend>
        Plotted: {shown.size} of {groups.length} charts{" "}
        <button type="button" className="link-button" data-testid="signal-all"
          onClick={() => onShown(new Set(groups.map((g) => g.id)))}>all</button>{" · "}
        <button type="button" className="link-button" data-testid="signal-none" onClick={() => onShown(new Set())}>none</button>
      </legend>
      {KINDS.map(([kind, title]) => {
        const ofKind = groups.filter((g) => g.kind === kind);
        if (ofKind.length === 0) return null;
        return (
          <div key={kind} className="signal-picker-kind">
            <span className="muted">{title}</span>
            {ofKind.map((g) => (
              <label key={g.id} title={g.columns.map((c) => c.label).join(", ")}>
                <input type="checkbox" data-testid={`signal-toggle-${testIdPart(g.id)}`} checked={shown.has(g.id)}
                  onChange={(e) => toggle(g.id, e.target.checked)} />
                {g.title.replace(/^(observation|action) · /, "")}
              </label>
            ))}
          </div>
        );
      })}
    </fieldset>
  );
}
