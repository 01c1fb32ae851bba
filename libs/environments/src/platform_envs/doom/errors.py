"""The Doom environments' error, the lazy import of ViZDoom, and the check of their settings."""

from __future__ import annotations

import math
from typing import Any

from platform_envs.errors import EnvError

INSTALL_COMMAND = "pip install 'platform-envs[doom]'"


class DoomError(EnvError, ValueError):
    """A bad Doom scenario or setting, a missing vizdoom, or a closed or finished Doom game."""


def import_vizdoom() -> Any:
    """The `vizdoom` module.

    Raises:
        DoomError: vizdoom is not installed; the message names the install command.
    """
    try:
        import vizdoom
    except ImportError as exc:
        raise DoomError(f"Doom environments need vizdoom, which is not installed: {INSTALL_COMMAND} ({exc})") from None
    return vizdoom


def check_settings(
    name: str,
    render_mode: Any,
    tics: Any,
    action_set: Any,
    labels: Any,
    depth: Any,
    max_episode_steps: Any,
) -> None:
    """Check `make_env`'s settings for scenario `name`.

    Raises:
        DoomError: the first bad one, named with what it must be.
    """
    if isinstance(tics, bool) or not isinstance(tics, int) or tics < 1:
        raise DoomError(f"{name}: tics must be an int >= 1, not {tics!r}")
    if render_mode not in (None, "rgb_array"):
        raise DoomError(f"{name}: render_mode must be 'rgb_array' or None, not {render_mode!r}")
    if action_set not in ("scenario", "full"):
        raise DoomError(f"{name}: action_set must be 'scenario' or 'full', not {action_set!r}")
    if max_episode_steps is not None and max_episode_steps != math.inf and (
        isinstance(max_episode_steps, bool) or not isinstance(max_episode_steps, int) or max_episode_steps < 1
    ):
        raise DoomError(f"{name}: max_episode_steps must be an int >= 1, inf or None, not {max_episode_steps!r}")
    for flag, value in (("labels", labels), ("depth", depth)):
        if not isinstance(value, bool):
            raise DoomError(f"{name}: {flag} must be true or false, not {value!r}")
