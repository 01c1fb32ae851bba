"""Where the modules named by older snapshots live now.

A snapshot is a pickle, and a pickle names each object's module. Snapshots saved before the
environments left the SDK (saved snapshots in the recorder's storage, exported states, lives
resumed from them) name `platform_sdk.adapters`, `platform_sdk.doom`, ...; the unpickler
(`snapshots.restore`) asks `current_module` for each name, so they restore onto the modules'
new homes.
"""

from __future__ import annotations

# Old module (or package) prefix -> its new name, most specific first.
MOVED_PREFIXES: tuple[tuple[str, str], ...] = (
    ("platform_sdk.server.world_change_timeline", "platform_envs.world_change_timeline"),
    ("platform_sdk.world_change_effects", "platform_envs.world_change_effects"),
    ("platform_sdk.world_changes", "platform_contracts.world_changes"),
    ("platform_sdk.doom.wad_format", "platform_wads.wad_format"),
    ("platform_sdk.adapters", "platform_envs.adapters"),
    ("platform_sdk.robots.state", "platform_envs.mujoco_state"),  # PhysicsState: robots' and DMC's snapshots
    ("platform_sdk.robots", "platform_envs.robots"),
    ("platform_sdk.menagerie", "platform_envs.robots.menagerie"),
    ("platform_sdk.doom", "platform_envs.doom"),
    ("platform_sdk.instance_launch", "platform_sdk.launch.instance_launch"),
    ("platform_sdk.instance_processes", "platform_sdk.launch.instance_processes"),
    ("platform_sdk.containers", "platform_sdk.launch.containers"),
)


def current_module(module: str) -> str:
    """The name `module` has now (itself when it has not moved)."""
    for old, new in MOVED_PREFIXES:
        if module == old or module.startswith(old + "."):
            return new + module[len(old):]
    return module
