"""Environments of the web app's browser tests, served through tests/web/catalog.toml.

`levels` (factory `make_levels`): a MultiDiscrete([3, 3, 2]) action, so the Session page shows a
row of level buttons per choice ("red", "green", "blue" in `metadata.action_names`). The reward
tells which levels the step got: reward = red + 3 * green + 9 * blue (each level's number), so
a test reads the action the server received off the reward (and off `info["levels"]`). The
observation is the last levels scaled to [0, 1] and the episode's progress; episodes are cut
(truncated) at 200 steps. With `ends_at_top` an episode ends (terminated, `info["is_success"]`
true) at the first step that sets every dial to its top level. `render()` draws the three
levels as coloured bars. With `step_seconds` each step takes that long (a slow environment: the
Session page's progress and Close during a step, tests/web/test_slow_step.py).
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

LEVELS = (3, 3, 2)
NAMES = ("red", "green", "blue")
WEIGHTS = (1, 3, 9)
MAX_STEPS = 200
COLOURS = ((220, 60, 60), (60, 180, 80), (70, 110, 230))


def reward_of(levels: list[int] | tuple[int, ...] | np.ndarray) -> float:
    """The reward a step with these levels earns."""
    return float(sum(w * int(level) for w, level in zip(WEIGHTS, levels, strict=True)))


class Levels(gym.Env[np.ndarray, np.ndarray]):
    """Three dials (see the module)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "render_fps": 10, "control_rate": 10.0,
                                "action_names": list(NAMES)}

    def __init__(self, render_mode: str | None = "rgb_array", max_steps: int = MAX_STEPS,
                 ends_at_top: bool = False, step_seconds: float = 0.0) -> None:
        self.render_mode = render_mode
        self.step_seconds = float(step_seconds)
        self.max_steps = max_steps
        self.ends_at_top = ends_at_top
        self.action_space = spaces.MultiDiscrete(list(LEVELS))
        self.observation_space = spaces.Box(0.0, 1.0, (4,), np.float32)
        self.levels = np.zeros(len(LEVELS), np.int64)
        self.steps = 0

    def _observation(self) -> np.ndarray:
        scaled = self.levels / (np.array(LEVELS) - 1)
        return np.append(scaled, self.steps / self.max_steps).astype(np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.levels = np.zeros(len(LEVELS), np.int64)
        self.steps = 0
        return self._observation(), {"levels": self.levels.tolist()}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict]:
        time.sleep(self.step_seconds)
        self.levels = np.asarray(action, np.int64).reshape(len(LEVELS))
        self.steps += 1
        info: dict[str, Any] = {"levels": self.levels.tolist()}
        at_top = bool(np.all(self.levels == np.array(LEVELS) - 1))
        if self.ends_at_top:
            info["is_success"] = at_top
        return self._observation(), reward_of(self.levels), self.ends_at_top and at_top, self.steps >= self.max_steps, info

    def render(self) -> np.ndarray:
        """A 64x96 picture: one bar per dial, as tall as its level."""
        frame = np.full((64, 96, 3), 245, np.uint8)
        for i, (level, top, colour) in enumerate(zip(self.levels, LEVELS, COLOURS, strict=True)):
            height = 8 + int(48 * int(level) / (top - 1))
            frame[64 - height:60, 8 + 30 * i:28 + 30 * i] = colour
        return frame


def make_levels(**kwargs: Any) -> Levels:
    return Levels(**kwargs)
