// The keys of a hand-controlled arm, shown on screen: which keys move the hand along which axis
// (the arrows as the session's camera shows the table, so they move it the way they point),
// Shift for the smaller move, Space for the gripper (with its held state), T for the teacher.
// data-testid: hand-keys (the legend), hand-key-<key> (ArrowUp, ArrowLeft, w: the row of that
// key pair, e.g. "hand_x − / +"), gripper-state ("open" or "closed").
import { handBindings, gripperClosed, type HandControl } from "../../lib/play/handKeys";
import { keyLabel } from "../../lib/play/keyMap";

interface Props {
  hand: HandControl;
  gripper: number | undefined;
  teacher: boolean;
}

const AXES = ["x", "y", "z"] as const;
const PAIRS: { keys: [string, string]; words: string }[] = [
  { keys: ["ArrowUp", "ArrowDown"], words: "away from you / toward you (up / down the picture)" },
  { keys: ["ArrowLeft", "ArrowRight"], words: "left / right in the picture" },
  { keys: ["w", "s"], words: "up / down" },
];

export function HandKeyLegend({ hand, gripper, teacher }: Props) {
  const closed = gripperClosed(hand, gripper);
  const smaller = hand.mode === "hand_steps" ? "the level next to the middle" : "half a step";
  const bindings = handBindings(hand.view);
  return (
    <div className="key-map hand-keys" data-testid="hand-keys" aria-label="Hand keys">
      <table>
        <tbody>
          {PAIRS.map(({ keys, words }) => {
            const [first, second] = keys.map((k) => bindings.find((b) => b.key === k)!);
            const sign = (s: number) => (s > 0 ? "+" : "−");
            return (
              <tr key={keys[0]} data-testid={`hand-key-${keys[0]}`}>
                <td>{keys.map((k) => <kbd key={k}>{keyLabel(k).toUpperCase()}</kbd>)}</td>
                <td>
                  <code>hand_{AXES[first.axis]} {sign(first.sign)} / {sign(second.sign)}</code>: {words}
                </td>
              </tr>
            );
          })}
          <tr>
            <td><kbd>Shift</kbd></td>
            <td>held with a move: a smaller one ({smaller})</td>
          </tr>
          <tr>
            <td><kbd>Space</kbd></td>
            <td>
              gripper: open / close (now <strong data-testid="gripper-state">{closed ? "closed" : "open"}</strong>)
            </td>
          </tr>
          {teacher ? (
            <tr>
              <td><kbd>T</kbd></td>
              <td>play the teacher's suggestion</td>
            </tr>
          ) : null}
          <tr>
            <td className="muted">no key</td>
            <td className="muted">the hand stays (unless a level or slider below is set: it holds)</td>
          </tr>
        </tbody>
      </table>
    </div>
  );
}
