"""DeepMind Control Suite tasks as Gymnasium environments: `make_env("cartpole", "swingup")`.

Every task of `dm_control.suite.ALL_TASKS` (catalog ids `dmc-<domain>-<task>`). The environment
steps the suite's `Physics` and `Task` itself, the way `dm_control.rl.control.Environment`
does (`before_step`, `substeps` physics steps, `after_step`, reward, observation, time limit,
then termination), so that its whole state is plain attributes:

- observations: a `Dict` of float64 `Box`es named as dm_control names them (a scalar is shape
  (1,)); keys in sorted order, as Gymnasium's `Dict` keeps them, which is also the order of
  `gymnasium.spaces.flatten` and of `get_observation_labels()`, which names the parts of the
  flat observation: walker gives [("height", 0, 1), ("orientations", 1, 15), ("velocity", 15, 24)].
- actions: a float64 `Box` with the bounds of the task's action spec; `metadata["action_names"]`
  names its entries (the actuators).
- reward: the task's reward (0.0 where dm_env gives none); `info["discount"]`: dm_env's discount.
- `terminated`: the episode ended with discount 0 (a terminal state); `truncated`: it ended with
  discount > 0, i.e. the time limit (`time_limit` seconds, the task's own by default) or a
  task's non-terminal end.
- `reset(seed=s)` seeds the task's `RandomState` with `s`, so the episode starts as after
  `suite.load(..., task_kwargs={"random": s})`; the first reset without a seed seeds it from
  the environment's `np_random` (from the OS, as Gymnasium does). The `random` task kwarg
  (default 0) seeds it at construction, and when given, drives unseeded resets. lqr also
  draws its system (stiffness, damping) from it at construction: fixed by default, so that
  every instance of `dmc-lqr-...` is the same system.
- `substeps`: physics steps per decision (the task's own by default); `metadata["control_rate"]`
  = 1 / (physics timestep * substeps) decisions per second; `render_fps` is it rounded.
- `env.spec.id` is the catalog id; `gymnasium.make(env.spec)` builds the same environment.
  `metadata` also holds `physics_timestep`, `substeps`, `time_limit` (seconds, None for none),
  `domain` and `task`.
- frames: `physics.render`-style offscreen RGB frames of `render_size` (height, width) from
  `camera_id`, fast by default, `render_quality="full"` for the model's own look
  (`platform_envs.adapters.dmc_render`). `MUJOCO_GL` is set to egl (or osmesa) unless set.
- pickling (the environment server's snapshots) keeps the full state: the physics'
  integration state and model changes (`platform_envs.adapters.dmc_state`), the task with its
  `RandomState`, the step counter, the spaces and `np_random`; never render resources.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium.envs.registration import EnvSpec

from platform_envs.adapters import dmc_spaces, dmc_state
from platform_envs.adapters.dmc_config import (
    INSTALL_COMMAND,
    RENDER_MODES,
    DmcConfig,
    DmControlError,
    catalog_id,
    load,
    physics_error,
)
from platform_envs.adapters.dmc_render import FrameRenderer
from platform_envs.adapters.mujoco_rendering import select_gl_backend

# dm_control picks its OpenGL back-end when it is first imported, possibly by the caller
select_gl_backend()

__all__ = ["INSTALL_COMMAND", "DmControlEnv", "DmControlError", "catalog_id", "make_env"]


def make_env(
    domain: str,
    task: str,
    substeps: int | None = None,
    time_limit: float | None = None,
    render_size: Sequence[int] = (240, 320),
    camera_id: int | str = 0,
    render_mode: str | None = "rgb_array",
    render_quality: str = "fast",
    **task_kwargs: Any,
) -> DmControlEnv:
    """The suite task `domain`/`task` as a Gymnasium environment (see the module docstring).

    Args:
        domain: a suite domain, e.g. "cartpole".
        task: one of its tasks, e.g. "swingup" ("swingup-sparse" is read as "swingup_sparse").
        substeps: physics steps per decision; None for the task's own.
        time_limit: episode length in seconds (`math.inf` for none); None for the task's own.
        render_size: (height, width) of frames in pixels.
        camera_id: the camera frames are taken from (index or name; -1 is the free camera).
        render_mode: "rgb_array" or None.
        render_quality: "fast" (the default) or "full".
        **task_kwargs: passed to the suite's task function (e.g. `random`, the construction seed).

    Raises:
        DmControlError: dm-control is not installed (the message names the install command), an
            unknown domain or task, or a bad setting.
    """
    config = DmcConfig.make(
        domain, task, substeps, time_limit, render_size, camera_id, render_mode, render_quality, task_kwargs
    )
    return DmControlEnv(config)


class DmControlEnv(gymnasium.Env[dict[str, np.ndarray], np.ndarray]):
    """One suite task as a Gymnasium environment; build it with `make_env`."""

    # Gymnasium types a `Dict` space as a space of dicts of spaces, not of its samples' dicts.
    observation_space: gymnasium.spaces.Dict  # type: ignore[assignment]

    def __init__(self, config: DmcConfig) -> None:
        loaded = load(config)
        physics = loaded.physics
        self._config = config
        self.render_mode = config.render_mode
        self.spec = EnvSpec(id=config.env_id, entry_point=f"{__name__}:make_env", kwargs=config.make_kwargs())
        self._task = loaded.task
        self._task_seeded = "random" in config.task_kwargs  # the user's seed drives unseeded resets
        timestep = float(physics.model.opt.timestep)
        self._substeps = config.substeps or round(loaded.control_timestep() / timestep)
        control_timestep = timestep * self._substeps
        if config.time_limit is not None:
            seconds = config.time_limit
        else:  # the task's own limit, which control.Environment keeps only in steps
            seconds = float(loaded._step_limit) * loaded.control_timestep()
        self._step_limit = _steps_in(seconds, control_timestep)
        self._steps = 0
        self._has_reset = False
        self.observation_space = dmc_spaces.observation_space(loaded.observation_spec())
        self.action_space = dmc_spaces.action_space(loaded.action_spec())
        control_rate = 1.0 / control_timestep
        self.metadata = {
            "render_modes": list(RENDER_MODES),
            "render_fps": round(control_rate),
            "control_rate": control_rate,
            "action_names": dmc_spaces.action_names(physics, self.action_space),
            "physics_timestep": timestep,
            "substeps": self._substeps,
            "time_limit": seconds if math.isfinite(seconds) else None,
            "domain": config.domain,
            "task": config.task,
        }
        self._physics = physics
        self._built = dmc_state.copy_arrays(physics.model.ptr)
        self._renderer = self._new_renderer()

    @property
    def physics(self) -> Any:
        """The dm_control `Physics` (read it; changing it changes the environment)."""
        return self._physics

    @property
    def task(self) -> Any:
        """The dm_control suite `Task`."""
        return self._task

    def get_observation_labels(self) -> list[tuple[str, int, int]]:
        """Names of the parts of the flat observation: (name, start, stop) per observation.

        The flat observation is `gymnasium.spaces.flatten(env.observation_space, obs)`; entry
        `name` of the observation is `flat[start:stop]` (raveled). The parts follow each other
        in the order of `observation_space` (sorted by name) and cover the flat observation.
        """
        return dmc_spaces.observation_labels(self.observation_space)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        physics = self._live_physics()
        if seed is not None:
            _seed(self._task.random, seed)
        elif not self._task_seeded:
            _seed(self._task.random, int(self.np_random.integers(2**32)))
        self._task_seeded = True
        with physics.reset_context():
            self._task.initialize_episode(physics)
        self._steps = 0
        self._has_reset = True
        return self._observation(), {}

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        physics = self._live_physics()
        if not self._has_reset:
            raise DmControlError(f"{self._config.name}: step before the first reset: call reset first")
        action = np.array(action, dtype=np.float64).reshape(self.action_space.shape)
        task = self._task
        try:
            task.before_step(action, physics)
            physics.step(self._substeps)
            task.after_step(physics)
        except physics_error() as exc:
            raise DmControlError(
                f"{self._config.name}: the simulation became unstable at step {self._steps + 1}: {exc}"
            ) from exc
        reward = task.get_reward(physics)
        observation = self._observation()
        self._steps += 1
        # as control.Environment: the time limit ends the episode first (with discount 1)
        discount = 1.0 if self._steps >= self._step_limit else task.get_termination(physics)
        terminated = discount is not None and float(discount) == 0.0
        truncated = discount is not None and not terminated
        info = {"discount": 1.0 if discount is None else float(discount)}
        return observation, 0.0 if reward is None else float(reward), terminated, truncated, info

    def render(self) -> np.ndarray | None:
        if self.render_mode is None:
            return None
        return self._renderer.render(self._live_physics())

    @property
    def max_episode_steps(self) -> int | None:
        """Decisions after which the time limit ends an episode; None without one. The
        environment server's spec carries it."""
        return None if math.isinf(self._step_limit) else int(self._step_limit)

    def close(self) -> None:
        """Free the render resources and the physics (idempotent)."""
        renderer = self.__dict__.get("_renderer")
        if renderer is not None:
            renderer.close()
        physics = self.__dict__.get("_physics")
        self._physics = None
        if physics is not None:
            physics.free()

    def __getstate__(self) -> dict[str, Any]:
        physics = self._live_physics()
        dmc_state.remember_built_model(repr(self._config), physics, self._built)
        state = {k: v for k, v in self.__dict__.items() if k not in ("_physics", "_renderer", "_built")}
        state["_physics_state"] = dmc_state.capture(physics, self._built)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        physics_state = state.pop("_physics_state")
        self.__dict__.update(state)
        config = self._config
        physics = dmc_state.built_physics(repr(config), lambda: load(config).physics)
        self._built = dmc_state.copy_arrays(physics.model.ptr)
        dmc_state.apply(physics, physics_state)
        self._physics = physics
        self._renderer = self._new_renderer()

    def _new_renderer(self) -> FrameRenderer:
        config = self._config
        return FrameRenderer(config.height, config.width, config.camera_id, config.render_quality)

    def _live_physics(self) -> Any:
        physics = self._physics
        if physics is None:
            raise DmControlError(f"{self._config.name}: the environment is closed")
        return physics

    def _observation(self) -> dict[str, np.ndarray]:
        values = self._task.get_observation(self._physics)
        return {
            name: np.array(values[name], dtype=np.float64).reshape(space.shape)
            for name, space in self.observation_space.spaces.items()
        }


def _seed(random: np.random.RandomState, seed: int) -> None:
    """Seed a task's RandomState as `np.random.RandomState(seed)` would be (any int >= 0)."""
    if 0 <= seed < 2**32:
        random.seed(seed)
    else:
        random.seed(np.random.SeedSequence(seed).generate_state(4))


def _steps_in(seconds: float, control_timestep: float) -> float:
    """Decisions in an episode of `seconds` (dm_control's `steps >= seconds / dt`), inf for none."""
    if not math.isfinite(seconds):
        return math.inf
    ratio = seconds / control_timestep
    return float(math.ceil(ratio - 1e-9 * max(1.0, ratio)))
