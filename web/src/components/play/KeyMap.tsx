// The keys of a Discrete action space, shown on screen: each action's keys and name, and what
// happens with no key down. data-testid: key-map (the list), key-<action> (one row).
import { keyLabel, type DiscreteKeyMap } from "../../lib/play/keyMap";

export function KeyMap({ keyMap, current }: { keyMap: DiscreteKeyMap; current: number | null }) {
  return (
    <div className="key-map" data-testid="key-map" aria-label="Keys">
      <table>
        <tbody>
          {keyMap.bindings.map((b) => (
            <tr key={`${b.keys.join("+")}-${b.action}`} data-testid={`key-${b.action}`}
              className={current === b.action ? "current" : undefined}>
              <td>{b.keys.map((k) => <kbd key={k}>{keyLabel(k)}</kbd>)}</td>
              <td>{b.label}</td>
            </tr>
          ))}
          <tr>
            <td className="muted">no key</td>
            <td className="muted">{keyMap.idleLabel}</td>
          </tr>
        </tbody>
      </table>
    </div>
  );
}
