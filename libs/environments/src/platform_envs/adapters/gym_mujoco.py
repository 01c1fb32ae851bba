"""Gymnasium's 11 MuJoCo tasks (the v5 ids) with fast headless rendering and their control rate.

`make_env` is the catalog's factory (`platform_envs.adapters.gym_mujoco:make_env`). MuJoCo is
imported only when an environment is made; without it, `make_env` raises an error naming the
install command.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from typing import Any

from platform_envs.adapters.mujoco_rendering import (
    HeadlessMujocoRenderer,
    MujocoError,
    check_quality,
    prepare_model,
    select_gl_backend,
)

log = logging.getLogger(__name__)

TASKS: tuple[str, ...] = (
    "Ant",
    "HalfCheetah",
    "Hopper",
    "Humanoid",
    "HumanoidStandup",
    "InvertedDoublePendulum",
    "InvertedPendulum",
    "Pusher",
    "Reacher",
    "Swimmer",
    "Walker2d",
)
VERSION = "v5"
INSTALL_COMMAND = "pip install 'platform-envs[mujoco]'"
_BY_KEY = {task.lower(): task for task in TASKS}


def make_env(
    task: str = "HalfCheetah",
    frame_skip: int | None = None,
    render_size: Sequence[int] = (240, 320),
    render_quality: str = "fast",
    render_mode: str | None = "rgb_array",
    **kwargs: Any,
) -> Any:
    """`gymnasium.make("<task>-v5")`, rendering headless at `render_size`.

    Args:
        task: one of `TASKS`; case, "-" and "_" are ignored ("inverted-double-pendulum").
        frame_skip: physics steps per `step`; None keeps the task's own.
        render_size: (height, width) of rendered frames.
        render_quality: "fast" (no shadows, reflections, skybox or multisampling; coarse
            ground planes) or "full" (the model's own settings). Never changes the physics.
        render_mode: Gymnasium's render mode.
        **kwargs: passed to `gymnasium.make` (e.g. `max_episode_steps`, `reset_noise_scale`).

    Returns:
        The environment; its `metadata` holds `control_rate` (decisions per second),
        `render_fps`, `action_names` (each actuator's name, else its joint's) and the render
        settings.

    Raises:
        MujocoError: an unknown task, a bad argument, or MuJoCo is not installed.
    """
    name = task_name(task)
    check_quality(render_quality)
    height, width = _render_size(render_size)
    if "width" in kwargs or "height" in kwargs:
        raise MujocoError("give the frame size as render_size=(height, width), not width/height")
    if frame_skip is not None:
        if isinstance(frame_skip, bool) or not isinstance(frame_skip, int) or frame_skip < 1:
            raise MujocoError(f"frame_skip must be a positive integer, not {frame_skip!r}")
        kwargs["frame_skip"] = frame_skip
    select_gl_backend()  # before MuJoCo is imported
    gymnasium = _import_backend()
    with _mujoco_warnings_to_log():
        env = gymnasium.make(
            f"{name}-{VERSION}", render_mode=render_mode, width=width, height=height, **kwargs
        )
    base = env.unwrapped
    prepare_model(base.model, render_quality, height, width)
    base.mujoco_renderer = HeadlessMujocoRenderer(base.mujoco_renderer, render_quality)
    control_rate = 1.0 / (base.model.opt.timestep * base.frame_skip)
    metadata = dict(base.metadata)
    metadata.update(
        # headless: no "human" window (Gymnasium's env checker would open one, and abort without a display)
        render_modes=[mode for mode in metadata.get("render_modes", ()) if mode != "human"],
        control_rate=control_rate,
        render_fps=round(control_rate),
        frame_skip=int(base.frame_skip),
        render_quality=render_quality,
        render_size=[height, width],
    )
    names = action_names(base.model)
    if names is not None:
        metadata["action_names"] = names
    base.metadata = metadata
    return env


def task_name(task: str) -> str:
    """The Gymnasium name of `task` ("halfcheetah" -> "HalfCheetah").

    Raises:
        MujocoError: not one of `TASKS`.
    """
    key = str(task).replace("-", "").replace("_", "").lower()
    key = key.removesuffix(VERSION)
    if key not in _BY_KEY:
        raise MujocoError(f"unknown Gymnasium MuJoCo task {task!r}: expected one of {', '.join(TASKS)}")
    return _BY_KEY[key]


def action_names(model: Any) -> list[str] | None:
    """One name per actuator: its own, else the joint, tendon, site or body it drives.

    None when some actuator has no name or two share one.
    """
    import mujoco

    objects = {
        mujoco.mjtTrn.mjTRN_JOINT: mujoco.mjtObj.mjOBJ_JOINT,
        mujoco.mjtTrn.mjTRN_JOINTINPARENT: mujoco.mjtObj.mjOBJ_JOINT,
        mujoco.mjtTrn.mjTRN_TENDON: mujoco.mjtObj.mjOBJ_TENDON,
        mujoco.mjtTrn.mjTRN_SITE: mujoco.mjtObj.mjOBJ_SITE,
        mujoco.mjtTrn.mjTRN_BODY: mujoco.mjtObj.mjOBJ_BODY,
    }
    names: list[str] = []
    for i in range(model.nu):
        name = model.actuator(i).name
        if not name:
            objtype = objects.get(mujoco.mjtTrn(int(model.actuator_trntype[i])))
            target = int(model.actuator_trnid[i, 0])
            name = (mujoco.mj_id2name(model, objtype, target) if objtype is not None else None) or ""
        if not name:
            return None
        names.append(name)
    return names if len(set(names)) == len(names) else None


def _render_size(render_size: Sequence[int]) -> tuple[int, int]:
    try:
        height, width = (int(v) for v in render_size)
    except (TypeError, ValueError):
        raise MujocoError(f"render_size must be (height, width), not {render_size!r}") from None
    if height < 1 or width < 1:
        raise MujocoError(f"render_size must be positive, not {render_size!r}")
    return height, width


def _import_backend() -> Any:
    import gymnasium

    try:
        import gymnasium.envs.mujoco  # its other dependencies (imageio, glfw)
        import mujoco  # noqa: F401 - imported only to fail here when it is missing
    except (ImportError, gymnasium.error.DependencyNotInstalled) as exc:
        raise MujocoError(f"Gymnasium's MuJoCo tasks need MuJoCo: {INSTALL_COMMAND} ({exc})") from None
    return gymnasium


@contextlib.contextmanager
def _mujoco_warnings_to_log() -> Iterator[None]:
    """MuJoCo's warnings (e.g. deprecated XML attributes) go to the log, not to MUJOCO_LOG.TXT."""
    import mujoco

    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(lambda message: log.info("MuJoCo: %s", message))
    try:
        yield
    finally:
        mujoco.set_mju_user_warning(previous)
