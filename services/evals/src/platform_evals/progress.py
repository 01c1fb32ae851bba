"""The runner's progress lines (`@@simulusion-eval {json}`, machine_side) read from the eval's
experiment log into its progress, the logs it wrote and how it finished."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

MARK = b"@@simulusion-eval "


@dataclass(frozen=True)
class RunnerState:
    phase: str = "waiting"  # "preparing", "running", "done"
    total: int = 0
    done: int = 0
    errors: int = 0
    tokens: int = 0
    logs: tuple[str, ...] = ()  # paths in the run folder, e.g. "logs/x.eval"
    finished: str = ""  # "success", "error", "cancelled"; empty until it said
    error: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> str:
        return json.dumps({"phase": self.phase, "total": self.total, "done": self.done, "errors": self.errors,
                           "tokens": self.tokens, "logs": list(self.logs), "finished": self.finished,
                           "error": self.error})

    @classmethod
    def from_json(cls, text: str) -> RunnerState:
        data = json.loads(text or "{}")
        return cls(phase=data.get("phase", "waiting"), total=data.get("total", 0), done=data.get("done", 0),
                   errors=data.get("errors", 0), tokens=data.get("tokens", 0), logs=tuple(data.get("logs", [])),
                   finished=data.get("finished", ""), error=data.get("error", ""))


def complete_lines(data: bytes) -> bytes:
    """The part of `data` up to and with its last newline (a line cut at the end waits)."""
    end = data.rfind(b"\n")
    return data[:end + 1] if end >= 0 else b""


def apply_lines(state: RunnerState, data: bytes) -> RunnerState:
    """`state` after the progress lines among `data`'s whole lines (other lines are the log's)."""
    for line in data.splitlines():
        if not line.startswith(MARK):
            continue
        try:
            event = json.loads(line[len(MARK):])
        except ValueError:
            continue
        if isinstance(event, dict):
            state = _apply(state, event)
    return state


def _apply(state: RunnerState, event: dict[str, Any]) -> RunnerState:
    kind = event.get("event")
    if kind == "environment":
        return replace(state, phase="preparing")
    if kind == "started":
        return replace(state, phase="running", total=state.total + int(event.get("total", 0)))
    if kind == "sample":
        return replace(state, phase="running", done=int(event.get("done", state.done)),
                       errors=int(event.get("errors", state.errors)), tokens=int(event.get("tokens", state.tokens)))
    if kind == "log" and isinstance(event.get("path"), str) and event["path"] not in state.logs:
        return replace(state, logs=(*state.logs, event["path"]))  # said when begun, and again when written
    if kind == "finished":
        return replace(state, phase="done", finished=str(event.get("status", "")), error=str(event.get("error", "")))
    return state
