"""A point-mass reacher: push a puck across a walled square onto a target.

A complete custom environment for the Simulusion platform: `make_env` is the factory that
`python -m platform_sdk --factory reacher2d:make_env` and `platform-check` call. It needs only
NumPy and Gymnasium; frames are drawn with NumPy (no display, no GPU).

Observation (Box, float32): puck position x, y; puck velocity x, y; target x, y.
Action (Box, float32, in [-1, 1]): the force on the puck along x and y.
Reward: minus the distance to the target, minus a small cost of the force; +1 on reaching
the target, which ends the episode. Episodes are cut after `max_steps` steps.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

ARENA = 1.0  # the square is [-ARENA, ARENA] on both axes
MAX_SPEED = 2.0
GOAL_RADIUS = 0.08
_PUCK_RADIUS = 0.06


class PointReacherEnv(gym.Env[np.ndarray, np.ndarray]):
    """A puck of unit mass pushed by a bounded force, with linear damping and walls.

    Args:
        render_mode: "rgb_array" for frames, or None.
        max_steps: the episode is truncated after this many steps.
        dt: seconds per step (the control rate is 1 / dt).
        damping: the fraction of velocity lost per second.
        force_scale: the acceleration of a full-scale action.
        frame_size: frames are `frame_size` x `frame_size` pixels.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 20}  # noqa: RUF012 - Gymnasium's convention

    def __init__(
        self,
        render_mode: str | None = None,
        max_steps: int = 200,
        dt: float = 0.05,
        damping: float = 0.5,
        force_scale: float = 3.0,
        frame_size: int = 128,
    ) -> None:
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be 'rgb_array' or None, not {render_mode!r}")
        if max_steps < 1 or dt <= 0 or frame_size < 16:
            raise ValueError("max_steps must be >= 1, dt > 0 and frame_size >= 16")
        self.render_mode = render_mode
        self.max_steps, self.dt, self.damping, self.force_scale = max_steps, dt, damping, force_scale
        self.frame_size = frame_size
        self.metadata = {
            **self.metadata,
            "render_fps": round(1.0 / dt),
            "control_rate": 1.0 / dt,
            "action_names": ["force_x", "force_y"],
        }
        limit = np.array([ARENA, ARENA, MAX_SPEED, MAX_SPEED, ARENA, ARENA], dtype=np.float32)
        self.observation_space = spaces.Box(-limit, limit, dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self._position = np.zeros(2)
        self._velocity = np.zeros(2)
        self._target = np.zeros(2)
        self._steps = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode; `options={"target": [x, y]}` places the target."""
        super().reset(seed=seed)
        inner = ARENA - _PUCK_RADIUS
        self._position = self.np_random.uniform(-inner, inner, size=2)
        self._velocity = np.zeros(2)
        target = (options or {}).get("target")
        self._target = (
            np.clip(np.asarray(target, dtype=np.float64), -inner, inner)
            if target is not None
            else self.np_random.uniform(-inner, inner, size=2)
        )
        self._steps = 0
        return self._observation(), {"distance": self._distance()}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        force = np.clip(np.asarray(action, dtype=np.float64), -1.0, 1.0)
        velocity = self._velocity * (1.0 - self.damping * self.dt) + force * self.force_scale * self.dt
        velocity = np.clip(velocity, -MAX_SPEED, MAX_SPEED)
        position = self._position + velocity * self.dt
        hit_wall = np.abs(position) > ARENA
        velocity[hit_wall] = 0.0  # an inelastic wall
        self._position = np.clip(position, -ARENA, ARENA)
        self._velocity = velocity
        self._steps += 1
        distance = self._distance()
        terminated = distance < GOAL_RADIUS
        reward = -distance - 0.01 * float(force @ force) + (1.0 if terminated else 0.0)
        truncated = self._steps >= self.max_steps and not terminated
        return self._observation(), reward, terminated, truncated, {"distance": distance}

    def render(self) -> np.ndarray | None:
        """An RGB frame: the target in red, the puck in blue, on a light floor."""
        if self.render_mode != "rgb_array":
            return None
        size = self.frame_size
        centres = (np.arange(size) + 0.5) / size * 2 * ARENA - ARENA  # pixel centres in world units
        x, y = np.meshgrid(centres, -centres)  # image rows go down, world y goes up
        frame = np.full((size, size, 3), 235, dtype=np.uint8)
        frame[np.hypot(x - self._target[0], y - self._target[1]) < GOAL_RADIUS] = (220, 50, 40)
        frame[np.hypot(x - self._position[0], y - self._position[1]) < _PUCK_RADIUS] = (40, 90, 220)
        frame[[0, -1], :] = frame[:, [0, -1]] = 60  # the walls
        return frame

    def _observation(self) -> np.ndarray:
        return np.concatenate([self._position, self._velocity, self._target]).astype(np.float32)

    def _distance(self) -> float:
        return float(np.linalg.norm(self._position - self._target))


def make_env(render_mode: str | None = None, **kwargs: Any) -> PointReacherEnv:
    """The factory: `python -m platform_sdk --factory reacher2d:make_env --path envs/byo-example`."""
    return PointReacherEnv(render_mode=render_mode, **kwargs)
