"""What one sample's episode came to, kept in the sample's store (`EpisodeOutcome:<field>`) for
the scorers and the log."""

from __future__ import annotations

from typing import Any

from inspect_ai.util import StoreModel
from pydantic import Field


class EpisodeOutcome(StoreModel):
    """One episode played by the model, filled in as it goes (a sample that fails midway keeps
    what it reached)."""

    env: str = ""
    seed: int = 0
    session_id: str | None = None
    recording_id: str | None = None  # the recording of a recorded session has the session's id
    replay: str | None = None  # the replay page of the recording
    steps: int = 0
    episode_return: float = 0.0
    success: bool | None = None  # info["is_success"] of the last step; None when not reported
    terminated: bool = False
    truncated: bool = False  # the environment's time limit
    stopped_at_max_steps: bool = False  # the task's max_steps ended it first
    decisions: int = 0  # actions chosen (each held for action_repeat steps)
    model_calls: int = 0
    invalid_actions: int = 0  # answers that were no valid action (each said back to the model)
    default_actions: int = 0  # decisions that fell back to the default action
    frames_shown: int = 0
    world_changes_applied: list[dict[str, Any]] = Field(default_factory=list)

    def link_text(self) -> str:
        """Where the episode's recording is, for scores' explanations."""
        return f"session {self.session_id}, replay {self.replay}" if self.session_id else "no session was opened"
