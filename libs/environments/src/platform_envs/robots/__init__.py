"""MuJoCo Menagerie robots as environments: arms that reach and pick and place, humanoids that
stand and walk (docs/robots.md). `make_env(robot, task, **kwargs)` is the catalog's factory."""

from __future__ import annotations

from typing import Any

from platform_envs.adapters.mujoco_rendering import select_gl_backend
from platform_envs.robots.errors import RobotError
from platform_envs.robots.tasks import TASKS, task_class

__all__ = ["TASKS", "RobotError", "make_env"]

# MuJoCo picks its OpenGL back-end when it is first imported: chosen here, so that a caller who
# imports platform_envs.robots and then mujoco renders headless too
select_gl_backend()


def make_env(robot: str, task: str, **kwargs: Any) -> Any:
    """`robot` (a Menagerie name, e.g. "franka_emika_panda") doing `task` ("reach", "pick_place",
    "stand", "walk"); kwargs are the task's (substeps, time_limit, control, ...).

    Raises:
        RobotError: an unknown robot, task or setting; one line naming what is allowed.
    """
    select_gl_backend()  # before MuJoCo is imported
    cls = task_class(robot, task)
    if task in ("stand", "walk"):
        kwargs["task"] = task
    try:
        return cls(robot, **kwargs)
    except TypeError as exc:  # an unknown keyword argument
        raise RobotError(f"{robot} {task}: {exc}") from None
