"""MuJoCo Menagerie robots, through the `mujoco-menagerie` package.

A robot is downloaded the first time it is used (6 to 72 MB) and cached
(`MENAGERIE_CACHE_DIR`, default `~/.cache/mujoco_menagerie`); `MENAGERIE_ROOT` points at a local
copy instead (one folder per robot, as Menagerie lays them out). While a robot downloads, its
progress goes to this module's logger and, as lines, to stderr: an environment instance's
stderr is its log, so a session that is still starting shows "downloading unitree_h1: 1.2/3.7
MB" in its log tail. `python -m platform_envs.robots.menagerie [NAMES...]` fetches robots ahead of time
with a progress bar.
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import Any

from platform_envs.robots.errors import RobotError

log = logging.getLogger(__name__)

INSTALL_COMMAND = "pip install 'platform-envs[robots]'"
# The robots of the built-in catalog (python -m platform_sdk.menagerie fetches these by default).
CATALOG_ROBOTS: tuple[str, ...] = (
    "franka_emika_panda",
    "ufactory_xarm7",
    "unitree_h1",
    "unitree_g1",
    "booster_t1",
)
_LINE_EVERY_S = 1.0  # progress lines in the log: at most one a second per robot, and the last


def package() -> Any:
    """The `mujoco_menagerie` module, or a RobotError naming the install command."""
    try:
        import mujoco_menagerie
    except ImportError as exc:
        raise RobotError(f"Menagerie robots need mujoco-menagerie: {INSTALL_COMMAND} ({exc})") from None
    return mujoco_menagerie


def robot_names() -> list[str]:
    """Every robot Menagerie has (no download)."""
    names: list[str] = package().names()
    return names


def robot_path(name: str, progress: Any = None) -> Path:
    """The robot's folder: under MENAGERIE_ROOT, else in the cache, downloaded first if needed.

    Args:
        name: a Menagerie robot name, e.g. "franka_emika_panda".
        progress: called as progress(name, done_bytes, total_bytes) while downloading; None logs
            it (`LogProgress`).

    Raises:
        RobotError: an unknown robot (naming the catalog's), a robot missing under
            MENAGERIE_ROOT, or a failed download; one line each.
    """
    mm = package()
    try:
        robot = mm.get(name)
    except mm.UnknownRobotError:
        raise RobotError(
            f"unknown Menagerie robot {name!r}; the catalog's robots: {', '.join(CATALOG_ROBOTS)} "
            "(python -m platform_sdk.menagerie --list shows every one)"
        ) from None
    try:
        path: Path = robot.path(progress=progress or LogProgress())
    except mm.MenagerieError as exc:
        raise RobotError(f"cannot get Menagerie robot {name!r}: {exc}{_root_hint()}") from None
    return path


def load_spec(name: str, entry: str | None = None) -> Any:
    """The robot's `entry` XML (its default scene when None) as a `mujoco.MjSpec`, to edit and compile.

    Raises:
        RobotError: as `robot_path`, or an unknown entry (naming the robot's entries).
    """
    import mujoco

    mm = package()
    folder = robot_path(name)
    robot = mm.get(name)
    try:
        file = robot.entry(entry).file
    except mm.UnknownEntryPointError:
        raise RobotError(
            f"Menagerie robot {name!r} has no entry {entry!r}; its entries: {', '.join(robot.entry_names)}"
        ) from None
    return mujoco.MjSpec.from_file(str(folder / file))


class LogProgress:
    """A download's progress as log lines and stderr lines: at most one a second, and the last."""

    def __init__(self) -> None:
        self._last = 0.0

    def __call__(self, name: str, done: int, total: int) -> None:
        now = time.monotonic()
        finished = bool(total) and done >= total
        if not finished and now - self._last < _LINE_EVERY_S:
            return
        self._last = now
        line = f"downloading Menagerie robot {name}: {_megabytes(done)}/{_megabytes(total)} MB"
        log.info("%s", line)
        print(line, file=sys.stderr, flush=True)


def _megabytes(count: int) -> str:
    return f"{count / 2**20:.1f}" if count else "?"


def _root_hint() -> str:
    import os

    root = os.environ.get("MENAGERIE_ROOT")
    if root:
        return f" (MENAGERIE_ROOT={root}: unset it to download, or put the robot's folder there)"
    return " (set MENAGERIE_ROOT to a local copy of Menagerie where robots cannot be downloaded)"
