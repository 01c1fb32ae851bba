"""What a run prints: a line per episode or window, and the JSON summary at the end."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from platform_sdk.agents.loop import AgentLoop, EpisodeRecord


def episode_line(record: EpisodeRecord) -> str:
    how = "terminated" if record.terminated else "truncated" if record.truncated else "restarted" \
        if record.restarted else "ended"
    success = "" if record.success is None else f", success {'yes' if record.success else 'no'}"
    return f"episode {record.episode}: {record.steps} steps, return {record.episode_return:g}, {how}{success}"


@dataclass
class WindowTally:
    """An endless run's rewards since its last log line."""

    first_step: int = 1
    reward: float = 0.0
    steps: int = 0
    restarts: int = 0

    def line(self, last_step: int) -> str:
        mean = self.reward / self.steps if self.steps else 0.0
        return (f"steps {self.first_step}-{last_step}: mean reward {mean:.4g} per step, "
                f"{self.restarts} restart{'s' if self.restarts != 1 else ''}")

    def next(self, last_step: int) -> WindowTally:
        return WindowTally(first_step=last_step + 1)


@dataclass
class RunSummary:
    """The summary's fields (`as_json` is the last line a run prints)."""

    env: str
    ended: str = "completed"  # or "interrupted", "platform error", "agent error"
    session_id: str | None = None
    recording_id: str | None = None
    replay: str | None = None
    life: str | None = None
    saved: str | None = None
    agent: dict[str, Any] = field(default_factory=dict)
    training: dict[str, Any] | None = None  # the training mode's tally (agents/training.py)

    def as_json(self, loop: AgentLoop | None, endless: bool, total_reward: float) -> str:
        finished = loop.finished if loop is not None else []
        returns = [record.episode_return for record in finished]
        reported = [record.success for record in finished if record.success is not None]
        steps = loop.iterations if loop is not None else 0
        decisions = loop.decisions if loop is not None else 0
        body: dict[str, Any] = {
            "ended": self.ended,
            "env": self.env,
            "episodes": len(finished),
            "steps": steps,
            "mean_return": _number(sum(returns) / len(returns)) if returns and not endless else None,
            "success_rate": sum(reported) / len(reported) if reported else None,
            "compute_s_per_decision": _number(loop.act_seconds / decisions) if loop is not None and decisions else None,
            "refused": loop.refused if loop is not None else 0,
            # settle_steps_per_decision, wait_steps_per_decision: only when the agent reports them
            **({f"{name}_per_decision": _number(mean) for name, mean in loop.work_per_decision().items()}
               if loop is not None else {}),
            "agent": self.agent,
            "session_id": self.session_id,
            "recording_id": self.recording_id,
            "replay": self.replay,
        }
        if endless:
            body["mean_reward_per_step"] = _number(total_reward / steps) if steps else None
            body["restarts"] = len(finished)
        if self.life is not None:
            body["life"] = self.life
        body["saved"] = self.saved
        if self.training is not None:
            body["training"] = self.training
        return json.dumps(body, default=_jsonable)


def _number(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _jsonable(value: Any) -> Any:
    """The agent's info() may hold numpy numbers or other objects: numbers stay numbers."""
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)
