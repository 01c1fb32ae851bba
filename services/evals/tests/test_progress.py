"""The runner's progress lines read into an eval's progress, a line cut at the end waiting."""

from __future__ import annotations

from platform_evals.progress import RunnerState, apply_lines, complete_lines


def test_progress_lines_amid_the_log() -> None:
    log = (b"$ uv venv ...\n@@simulusion-eval {\"event\": \"environment\", \"made\": true}\n"
           b"@@simulusion-eval {\"event\": \"started\", \"total\": 4}\nplain output\n"
           b"@@simulusion-eval {\"event\": \"sample\", \"done\": 1, \"errors\": 0, \"tokens\": 15, \"total\": 4}\n"
           b"@@simulusion-eval {\"event\": \"sample\", \"done\": 2, \"errors\": 1, \"tokens\": 30")
    whole = complete_lines(log)
    state = apply_lines(RunnerState(), whole)
    assert (state.phase, state.total, state.done, state.errors, state.tokens) == ("running", 4, 1, 0, 15)
    rest = log[len(whole):] + b", \"total\": 4}\n@@simulusion-eval {\"event\": \"log\", \"path\": \"logs/a.eval\"}\n" \
        b"@@simulusion-eval {\"event\": \"finished\", \"status\": \"success\", \"error\": \"\"}\n@@simulusion-eval {no"
    state = apply_lines(state, complete_lines(rest))
    assert (state.done, state.errors, state.tokens, state.logs, state.finished) == (2, 1, 30, ("logs/a.eval",), "success")
    assert RunnerState.from_json(state.to_json()) == state


def test_a_log_said_when_begun_and_when_written_is_one_log() -> None:
    lines = (b"@@simulusion-eval {\"event\": \"log\", \"path\": \"logs/a.eval\", \"status\": \"started\"}\n"
             b"@@simulusion-eval {\"event\": \"log\", \"path\": \"logs/b.eval\", \"status\": \"started\"}\n"
             b"@@simulusion-eval {\"event\": \"log\", \"path\": \"logs/a.eval\", \"status\": \"success\"}\n")
    assert apply_lines(RunnerState(), lines).logs == ("logs/a.eval", "logs/b.eval")
