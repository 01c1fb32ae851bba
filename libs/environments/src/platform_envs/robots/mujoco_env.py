"""MujocoRobotEnv: the base of the Menagerie robot environments.

One `mujoco.MjModel` (a Menagerie robot's MjSpec plus what its task adds, compiled once per
process: the model as built) and its `mujoco.MjData`. Every decision covers `substeps` physics
steps, in one `mj_step` call; `metadata["control_rate"]` = 1 / (timestep x substeps) decisions
a second. Subclasses (the tasks) give:

- `_observation_parts()`: the observation as ordered named parts, which the base concatenates
  into a float64 Box and names in `get_observation_labels()` (hand_position, joint_angles, ...);
- `_apply_action(action)`: the controls for the next decision;
- `_reward()`: the reward and its terms (put in `info["reward_terms"]`);
- `_terminated()`, `_reset_task(rng)` (the episode's start, drawn from the env's `np_random`)
  and `_info()` (e.g. `is_success`, `teacher_action`);
- `_built_model()`: the model as built (cached), which unpickling starts from.

The environment's world is `env.model` and `env.data` (raw MuJoCo objects): world changes edit
`model`. Pickling (the environment server's snapshots) keeps the model's edits and the whole
integration state (`platform_envs.mujoco_state`), never render resources, so a restored
environment continues bit for bit.
"""

from __future__ import annotations

import atexit
import copy
import math
import weakref
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from platform_envs import mujoco_state
from platform_envs.adapters.mujoco_rendering import (
    RENDER_QUALITIES,
    prepare_model,
    select_gl_backend,
)
from platform_envs.robots.errors import RobotError
from platform_envs.robots.fast_frames import FrameRenderer

# MuJoCo picks its OpenGL back-end when it is first imported, possibly by the caller
select_gl_backend()

RENDER_MODES: tuple[str, ...] = ("rgb_array",)
# Environments with a render context: closed at exit, before MuJoCo's EGL module terminates its
# display (a context freed after that, by the garbage collector, raises inside EGL). The hook is
# registered after the first context exists, so that it runs before MuJoCo's own exit hook.
_RENDERING: weakref.WeakSet[MujocoRobotEnv] = weakref.WeakSet()
_exit_hook: list[bool] = []
_NOT_PICKLED = ("model", "data", "_renderer", "_built")


class MujocoRobotEnv(gymnasium.Env[np.ndarray, Any]):
    """A MuJoCo robot task stepped `substeps` physics steps per decision (module docstring).

    Args:
        model: the task's model as built (the base works on its own copy).
        robot: the Menagerie robot's name, e.g. "unitree_h1".
        task: the task's name, e.g. "walk".
        substeps: physics steps per decision (an int >= 1).
        time_limit: episode length in seconds (truncated after it); None for none.
        render_size: (height, width) of frames.
        camera: the camera frames come from (name or index; None or -1 for the free camera).
        render_mode: "rgb_array" or None.
        render_quality: "fast" (no shadows, reflections or multisampling) or "full".
        env_id: the catalog id, for `env.spec`.

    Raises:
        RobotError: a bad setting, naming it and what it must be.
    """

    metadata: dict[str, Any] = {"render_modes": list(RENDER_MODES)}  # noqa: RUF012 - gymnasium's

    def __init__(
        self,
        model: Any,
        *,
        robot: str,
        task: str,
        substeps: int,
        time_limit: float | None = None,
        render_size: Sequence[int] = (240, 320),
        camera: str | int | None = None,
        render_mode: str | None = "rgb_array",
        render_quality: str = "fast",
        env_id: str | None = None,
    ) -> None:
        import mujoco

        name = f"{robot} {task}"
        if isinstance(substeps, bool) or not isinstance(substeps, int) or substeps < 1:
            raise RobotError(f"{name}: substeps must be an int >= 1, not {substeps!r}")
        if time_limit is not None and (
            isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or not time_limit > 0
        ):
            raise RobotError(f"{name}: time_limit must be seconds > 0 (or null for none), not {time_limit!r}")
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise RobotError(f"{name}: render_mode must be 'rgb_array' or null, not {render_mode!r}")
        if render_quality not in RENDER_QUALITIES:
            raise RobotError(f"{name}: render_quality must be one of {', '.join(RENDER_QUALITIES)}, not {render_quality!r}")
        try:
            height, width = (int(v) for v in render_size)
        except (TypeError, ValueError):
            raise RobotError(f"{name}: render_size must be (height, width), not {render_size!r}") from None
        if height < 1 or width < 1:
            raise RobotError(f"{name}: render_size must be positive, not {render_size!r}")
        self.robot_name = robot
        self.task_name = task
        self.substeps = substeps
        self.render_mode = render_mode
        self._render_quality = render_quality
        self._render_size = (height, width)
        self._camera = _camera_id(model, camera, name)
        self.model = copy.copy(model)
        prepare_model(self.model, render_quality, height, width)
        self._built = mujoco_state.copy_arrays(self.model)
        self.data = mujoco.MjData(self.model)
        self._renderer: Any = None
        timestep = float(self.model.opt.timestep)
        self.control_rate = 1.0 / (timestep * substeps)
        self.time_limit = None if time_limit is None or math.isinf(time_limit) else float(time_limit)
        self._step_limit = (
            None if self.time_limit is None else max(1, math.ceil(self.time_limit * self.control_rate - 1e-9))
        )
        self._steps = 0
        self._has_reset = False
        # the observation's parts at the model's initial state give its size and labels
        self._reset_task(np.random.default_rng(0))
        mujoco.mj_forward(self.model, self.data)
        parts = self._observation_parts()
        self._labels = _labels_of(parts)
        size = self._labels[-1][2] if self._labels else 0
        self.observation_space = spaces.Box(-np.inf, np.inf, (size,), np.float64)
        self.metadata = {
            "render_modes": list(RENDER_MODES),
            "render_fps": round(self.control_rate),
            "control_rate": self.control_rate,
            "substeps": substeps,
            "physics_timestep": timestep,
            "time_limit": self.time_limit,
            "robot": robot,
            "task": task,
            "action_names": [self.model.actuator(i).name for i in range(self.model.nu)],
            "control": "joints",  # hand-controlled arms say "hand_steps" or "hand"
            "render_quality": render_quality,
            "render_size": [height, width],
        }
        if env_id is not None:
            self.spec = gymnasium.envs.registration.EnvSpec(id=env_id, entry_point="platform_envs.robots:make_env")

    # -- the task's hooks ------------------------------------------------------------------------

    def _observation_parts(self) -> list[tuple[str, np.ndarray]]:
        raise NotImplementedError

    def _apply_action(self, action: np.ndarray) -> None:
        raise NotImplementedError

    def _reward(self) -> tuple[float, dict[str, float]]:
        return 0.0, {}

    def _terminated(self) -> bool:
        return False

    def _reset_task(self, rng: np.random.Generator) -> None:
        """Set the episode's initial state (data is freshly reset to the model's defaults)."""

    def _info(self) -> dict[str, Any]:
        return {}

    def _built_model(self) -> Any:
        """The task's model as built (cached per process): what unpickling starts from."""
        raise NotImplementedError(f"{type(self).__name__} must give _built_model() to be pickled")

    # -- gymnasium -------------------------------------------------------------------------------

    def get_observation_labels(self) -> list[tuple[str, int, int]]:
        """(name, start, stop) of each part of the observation, in order, covering it."""
        return list(self._labels)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        import mujoco

        super().reset(seed=seed)
        mujoco.mj_resetData(self.model, self.data)
        self._reset_task(self.np_random)
        mujoco.mj_forward(self.model, self.data)
        self._steps = 0
        self._has_reset = True
        return self._observation(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        import mujoco

        if not self._has_reset:
            raise RobotError(f"{self.robot_name} {self.task_name}: step before the first reset: call reset first")
        self._apply_action(self._checked_action(action))
        # MuJoCo resets the data when accelerations blow up (and counts a warning): that is a
        # failed step, not a fresh start
        bad_accelerations = self.data.warning[mujoco.mjtWarning.mjWARN_BADQACC]
        blowups = int(bad_accelerations.number)
        mujoco.mj_step(self.model, self.data, nstep=self.substeps)
        self._steps += 1
        if int(bad_accelerations.number) != blowups or not np.isfinite(self.data.qacc).all():
            raise RobotError(
                f"{self.robot_name} {self.task_name}: the simulation became unstable at step {self._steps}"
                " (accelerations past MuJoCo's limits): reset the environment"
            )
        observation = self._observation()
        reward, terms = self._reward()
        terminated = bool(self._terminated())
        truncated = not terminated and self._step_limit is not None and self._steps >= self._step_limit
        info = self._info()
        info["reward_terms"] = {name: float(value) for name, value in terms.items()}
        return observation, float(reward), terminated, truncated, info

    def render(self) -> np.ndarray | None:
        """A (height, width, 3) uint8 frame from the env's camera; None without a render_mode.

        The renderer (robots/fast_frames.py: simplified meshes and a coarse floor in "fast"
        quality) is made at the first frame and draws `model` and `data` as they are; rendering
        never changes either.
        """
        if self.render_mode is None:
            return None
        if self._renderer is None:
            height, width = self._render_size
            self._renderer = FrameRenderer(self.model, height, width, self._render_quality)
            _RENDERING.add(self)
            if not _exit_hook:
                atexit.register(_close_renderers)
                _exit_hook.append(True)
        self._renderer.update_scene(self.data, camera=self._camera)
        frame: np.ndarray = self._renderer.render()
        return frame

    def close(self) -> None:
        renderer = self.__dict__.get("_renderer")
        self._renderer = None
        if renderer is not None:
            renderer.close()

    # -- pickling (snapshots) --------------------------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in _NOT_PICKLED}
        state["_physics_state"] = mujoco_state.capture(self.model, self.data, self._built)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        import mujoco

        state = dict(state)
        physics = state.pop("_physics_state")
        self.__dict__.update(state)
        model = copy.copy(self._built_model())
        height, width = self._render_size
        prepare_model(model, self._render_quality, height, width)
        self.model = model
        self._built = mujoco_state.copy_arrays(model)
        self.data = mujoco.MjData(model)
        self._renderer = None
        mujoco_state.apply(model, self.data, physics)
        mujoco.mj_forward(model, self.data)

    # -- helpers ---------------------------------------------------------------------------------

    @property
    def elapsed_steps(self) -> int:
        """Decisions taken in this episode."""
        return self._steps

    @property
    def max_episode_steps(self) -> int | None:
        """Decisions after which an episode is truncated (time_limit x the control rate, rounded
        up); None without a time limit. The environment server's spec carries it."""
        return self._step_limit

    def _observation(self) -> np.ndarray:
        parts = self._observation_parts()
        return np.concatenate([np.asarray(value, dtype=np.float64).reshape(-1) for _, value in parts])

    def _checked_action(self, action: Any) -> np.ndarray:
        space = self.action_space
        try:
            value = np.asarray(action, dtype=space.dtype).reshape(space.shape)
        except (TypeError, ValueError):
            raise RobotError(
                f"{self.robot_name} {self.task_name}: action {action!r} does not fit the action space {space}"
            ) from None
        if isinstance(space, spaces.Box):
            if not np.isfinite(value).all():
                raise RobotError(f"{self.robot_name} {self.task_name}: the action has NaN or infinite entries: {action!r}")
        elif not space.contains(value):
            raise RobotError(f"{self.robot_name} {self.task_name}: action {action!r} is outside the action space {space}")
        return value


def _close_renderers() -> None:
    for env in list(_RENDERING):
        env.close()


def _labels_of(parts: list[tuple[str, np.ndarray]]) -> list[tuple[str, int, int]]:
    labels: list[tuple[str, int, int]] = []
    start = 0
    for name, value in parts:
        size = int(np.asarray(value).size)
        labels.append((name, start, start + size))
        start += size
    return labels


def _camera_id(model: Any, camera: str | int | None, name: str) -> int:
    import mujoco

    if camera is None:
        return -1
    if isinstance(camera, str):
        index = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, camera)
        if index < 0:
            names = [model.camera(i).name for i in range(model.ncam)]
            raise RobotError(f"{name}: no camera named {camera!r}; its cameras: {', '.join(names) or 'none'}")
        return int(index)
    if isinstance(camera, bool) or not isinstance(camera, int) or not -1 <= camera < max(model.ncam, 1):
        raise RobotError(f"{name}: camera must be a camera's name or an index in [-1, {model.ncam}), not {camera!r}")
    return camera
