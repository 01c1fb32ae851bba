"""Which class runs each (robot, task) of the Menagerie catalog, imported only when used."""

from __future__ import annotations

import importlib
from typing import Any

from platform_envs.robots.errors import RobotError

ARMS: tuple[str, ...] = ("franka_emika_panda", "ufactory_xarm7")
HUMANOIDS: tuple[str, ...] = ("unitree_h1", "unitree_g1", "booster_t1")

_ARM_TASKS = {
    "reach": "platform_envs.robots.arm_reach:ArmReachEnv",
    "pick_place": "platform_envs.robots.pick_place:PickPlaceEnv",
}
_HUMANOID_TASKS = {
    "stand": "platform_envs.robots.humanoid:HumanoidEnv",
    "walk": "platform_envs.robots.humanoid:HumanoidEnv",
}
TASKS: dict[tuple[str, str], str] = {
    **{(robot, task): path for robot in ARMS for task, path in _ARM_TASKS.items()},
    **{(robot, task): path for robot in HUMANOIDS for task, path in _HUMANOID_TASKS.items()},
}


def task_class(robot: str, task: str) -> Any:
    """The environment class of `robot` doing `task`.

    Raises:
        RobotError: an unknown robot or task, naming the ones there are.
    """
    path = TASKS.get((robot, task))
    if path is None:
        robots = sorted({name for name, _ in TASKS})
        if robot not in robots:
            raise RobotError(f"unknown robot {robot!r}; the robots: {', '.join(robots)}")
        tasks = sorted(name for owner, name in TASKS if owner == robot)
        raise RobotError(f"{robot} has no task {task!r}; its tasks: {', '.join(tasks)}")
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)
