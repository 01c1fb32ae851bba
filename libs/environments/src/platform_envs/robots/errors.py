"""The error of the Menagerie robot environments."""

from __future__ import annotations

from platform_envs.errors import EnvError


class RobotError(EnvError, ValueError):
    """A robot environment cannot be built or stepped; the one-line message says why and how to fix it."""
