// The keys of a hand-controlled arm, shown on screen: which keys move the hand along each axis,
// Shift for the smaller move, Space for the gripper (with its held state), T for the teacher.
// data-testid: hand-keys (the legend), gripper-state ("open" or "closed").
import { gripperClosed, type HandControl } from "../../lib/play/handKeys";
import { keyLabel } from "../../lib/play/keyMap";

interface Props {
  hand: HandControl;
  gripper: number | undefined;
  teacher: boolean;
}

const ROWS: { keys: string[]; what: string }[] = [
  { keys: ["ArrowUp", "ArrowDown"], what: "hand_x: away from the camera (toward the arm's base) / toward it" },
  { keys: ["ArrowLeft", "ArrowRight"], what: "hand_y: left / right across the table" },
  { keys: ["W", "S"], what: "hand_z: up / down" },
];

export function HandKeyLegend({ hand, gripper, teacher }: Props) {
  const closed = gripperClosed(hand, gripper);
  const smaller = hand.mode === "hand_steps" ? "the level next to the middle" : "half a step";
  return (
    <div className="key-map hand-keys" data-testid="hand-keys" aria-label="Hand keys">
      <table>
        <tbody>
          {ROWS.map((row) => (
            <tr key={row.what}>
              <td>{row.keys.map((k) => <kbd key={k}>{keyLabel(k)}</kbd>)}</td>
              <td>{row.what}</td>
            </tr>
          ))}
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
