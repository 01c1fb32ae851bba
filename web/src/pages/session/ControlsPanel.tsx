// The person's controls for the action space: the key map (Discrete), one named slider per
// dimension (Box; the value holds from step to step), a row of level buttons per choice
// (MultiDiscrete) or toggles (MultiBinary); a hand-controlled arm's hand keys above its levels or
// sliders; the teacher's suggestion when the latest info has one.
// data-testid: controls, key-map (components/play/KeyMap), hand-keys and gripper-state
// (components/play/HandKeyLegend), slider-<i>, slider-value-<i>, level-<dim>-<value>
// (aria-pressed when held), toggle-<i>, no-controls; TeacherPanel.tsx: teacher, teacher-action,
// teacher-play, teacher-follow.
import { HandKeyLegend } from "../../components/play/HandKeyLegend";
import { KeyMap } from "../../components/play/KeyMap";
import { formatNumber } from "../../lib/format";
import { GRIPPER } from "../../lib/play/handKeys";
import { TeacherPanel } from "./TeacherPanel";
import type { Play } from "./usePlay";

export function ControlsPanel({ play }: { play: Play }) {
  const { controls, values, setValue } = play;
  return (
    <section className="panel controls" data-testid="controls" aria-label="Controls">
      <h2>Controls</h2>
      {play.hand ? (
        <>
          <p className="muted">Press Play, then hold the keys (they act at each step), or Step once per move.</p>
          <HandKeyLegend hand={play.hand} gripper={values[GRIPPER]} teacher={play.hasTeacher} />
        </>
      ) : null}
      <TeacherPanel play={play} />
      {controls.kind === "keys" ? (
        <>
          <p className="muted">Press Play, then hold the keys (they act at each step).</p>
          <KeyMap keyMap={controls.keyMap} current={play.mode === "playing" ? Number(values[0]) : null} />
        </>
      ) : null}
      {controls.kind === "sliders" ? (
        <div className="sliders">
          {controls.sliders.map((s) => (
            <label key={s.index} className="slider">
              <span className="slider-name" title={s.name}>{s.name}</span>
              <input type="range" data-testid={`slider-${s.index}`} min={s.min} max={s.max} step={s.step}
                value={values[s.index]} aria-valuetext={formatNumber(values[s.index])}
                onChange={(e) => setValue(s.index, Number(e.target.value))} />
              <output data-testid={`slider-value-${s.index}`}>{controls.integer ? String(values[s.index]) : values[s.index].toFixed(2)}</output>
            </label>
          ))}
          <p className="muted">A slider's value holds at every step until you move it (arrow keys move a focused one).</p>
        </div>
      ) : null}
      {controls.kind === "levels" ? (
        <div className="levels">
          {controls.rows.map((row) => (
            <div key={row.index} className="level-row" role="group" aria-label={row.name}>
              <span className="level-name">{row.name}</span>
              {row.levels.map((level) => (
                <button key={level} type="button" data-testid={`level-${row.index}-${level}`} aria-pressed={values[row.index] === level}
                  className={values[row.index] === level ? "level on" : "level"} onClick={() => setValue(row.index, level)}>
                  {level}
                </button>
              ))}
            </div>
          ))}
          <p className="muted">The chosen level of each row holds at every step.</p>
        </div>
      ) : null}
      {controls.kind === "toggles" ? (
        <div className="levels">
          {controls.names.map((name, i) => (
            <button key={name} type="button" data-testid={`toggle-${i}`} aria-pressed={values[i] === 1}
              className={values[i] === 1 ? "level on" : "level"} onClick={() => setValue(i, values[i] === 1 ? 0 : 1)}>
              {name}
            </button>
          ))}
        </div>
      ) : null}
      {controls.kind === "none" ? <p className="muted" data-testid="no-controls">{controls.why}.</p> : null}
    </section>
  );
}
