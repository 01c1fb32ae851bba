"""The settings of the episode task, checked once when the task is made."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from platform_sdk.inspect_tasks.frames import FRAMES_SETTINGS


@dataclass(frozen=True)
class EpisodeSettings:
    """How every sample's episode is played.

    Attributes:
        env: the catalog id.
        kwargs: the environment's arguments (`world_changes` among them when given).
        url: the platform (None: `PLATFORM_URL`, then http://127.0.0.1:8000). The token is only
            ever `PLATFORM_TOKEN`, never a task argument, so it is not written to the log.
        max_steps: the episode ends (stopped, not truncated by the environment) after this many steps.
        frames: "auto", "on" or "off" (frames.shows_frames).
        action_repeat: each action the model chooses is taken for this many steps (fewer model
            calls: at most max_steps / action_repeat decisions).
        invalid_tries: answers the model gets for one decision; after that many invalid ones the
            default action is taken.
        history: earlier decisions the model is shown with the current observation.
    """

    env: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    url: str | None = None
    max_steps: int = 100
    frames: str = "auto"
    action_repeat: int = 1
    invalid_tries: int = 3
    history: int = 4

    def __post_init__(self) -> None:
        for name in ("max_steps", "action_repeat", "invalid_tries"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name}={getattr(self, name)}: it must be 1 or more")
        if self.history < 0:
            raise ValueError(f"history={self.history}: it must be 0 or more")
        if self.frames not in FRAMES_SETTINGS:
            raise ValueError(f"frames={self.frames!r}: choose one of {', '.join(FRAMES_SETTINGS)}")
        if not self.env:
            raise ValueError("env: name a catalog id (GET /v0/envs lists them), e.g. env=cartpole")
