// The teacher's suggestion for the next action (info.teacher_action of the latest step or reset,
// e.g. pick and place's scripted expert under hand control): shown, played once by the Teacher
// button or T, or followed at every step while the toggle is on. Hidden when the environment's
// info has no teacher_action.
// data-testid: teacher, teacher-action (the suggestion, JSON; "none" when it does not fit the
// action space), teacher-play, teacher-follow.
import type { Play } from "./usePlay";

export function TeacherPanel({ play }: { play: Play }) {
  if (!play.hasTeacher) return null;
  const suggestion = play.teacherSuggestion;
  const ready = play.phase === "ready" && !play.view.ended;
  return (
    <div className="teacher" data-testid="teacher" role="group" aria-label="Teacher">
      <span>
        Teacher suggests <code data-testid="teacher-action">{suggestion === null ? "none" : JSON.stringify(suggestion)}</code>
      </span>
      <button type="button" data-testid="teacher-play" disabled={!ready || suggestion === null}
        title="Play the teacher's suggestion (key T)" onClick={play.playTeacher}>
        Teacher <kbd>T</kbd>
      </button>
      <label className="checkbox">
        <input type="checkbox" data-testid="teacher-follow" checked={play.followTeacher}
          onChange={(e) => play.setFollowTeacher(e.target.checked)} />
        follow the teacher at every step (Play runs it)
      </label>
    </div>
  );
}
