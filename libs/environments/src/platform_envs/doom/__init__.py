"""Doom through ViZDoom: `make_env(scenario=...)`, a Gymnasium environment whose snapshots
replay the episode (see `platform_envs.doom.env`). ViZDoom is loaded on first use; without it,
making an environment raises a `DoomError` that names the install command."""

from __future__ import annotations

from platform_envs.doom.env import DoomEnv, make_env
from platform_envs.doom.errors import INSTALL_COMMAND, DoomError
from platform_envs.doom.scenarios import SCENARIOS

__all__ = ["INSTALL_COMMAND", "SCENARIOS", "DoomEnv", "DoomError", "make_env"]
