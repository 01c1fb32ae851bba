"""A test environment whose episodes end in a success or a failure, for the episode browser's
browser tests (tests/web/catalog.toml's `goal`).

Each step walks one cell left (action 0) or right (action 1) from the middle of a 5-cell line;
reaching the right end terminates with `is_success` True and outcome "reached", the left end
with `is_success` False and outcome "fell"; the reward is -1 a step, +10 on reaching the goal.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

CELLS = 5


class Goal(gym.Env[np.ndarray, np.int64]):
    """A walk to the right end of a line (see the module)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "render_fps": 10, "control_rate": 10.0}

    def __init__(self, render_mode: str | None = "rgb_array") -> None:
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(2)
        self.observation_space = spaces.Box(0.0, 1.0, (1,), np.float32)
        self.cell = CELLS // 2

    def _observation(self) -> np.ndarray:
        return np.array([self.cell / (CELLS - 1)], np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.cell = CELLS // 2
        return self._observation(), {}

    def step(self, action: np.int64) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.cell += 1 if int(action) == 1 else -1
        info: dict[str, Any] = {}
        reward = -1.0
        if self.cell in (0, CELLS - 1):
            reached = self.cell == CELLS - 1
            info = {"is_success": reached, "outcome": "reached" if reached else "fell"}
            reward += 10.0 if reached else 0.0
        return self._observation(), reward, self.cell in (0, CELLS - 1), False, info

    def render(self) -> np.ndarray:
        frame = np.full((16, 16 * CELLS, 3), 245, np.uint8)
        frame[:, 16 * self.cell:16 * self.cell + 16] = (70, 110, 230)
        return frame


def make_goal(**kwargs: Any) -> Goal:
    return Goal(**kwargs)
