"""Snapshots saved before the environments left the SDK still restore.

The files in data/ were captured with the code of commit 8a717b0, where the environments were
`platform_sdk.adapters`, `platform_sdk.doom`, `platform_sdk.world_change_effects` and
`platform_sdk.server.world_change_timeline`, and the world-change kinds `platform_sdk.world_changes`
(their pickles name those modules). The environment server's unpickler maps each old name to
the module's new home (`platform_sdk.server.moved_modules`).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
from platform_sdk.server import snapshots
from platform_sdk.server.moved_modules import current_module

DATA = Path(__file__).parent / "data"


def old_snapshot(name: str) -> snapshots.Snapshot:
    data = gzip.decompress((DATA / f"{name}.old.pickle.gz").read_bytes())
    assert b"platform_sdk." in data  # it really names the old modules
    return snapshots.Snapshot(data)


def test_a_cartpole_with_a_sensor_noise_timeline_carries_on_exactly() -> None:
    from platform_envs.world_change_timeline import WorldChangeTimeline

    env, observation, _ = snapshots.restore(old_snapshot("cartpole_timeline"))
    assert isinstance(env, WorldChangeTimeline)
    assert observation.shape == (4,)
    # the step the old code took next from that state (noise from the pickled generator)
    expected = [0.012887513265013695, 0.7480080127716064, -0.05432189628481865, -1.1401084661483765]
    np.testing.assert_array_equal(env.step(0)[0], np.asarray(expected, dtype=np.float32))


def test_a_doom_episode_restores_onto_platform_envs() -> None:
    from doom_required import require_vizdoom

    require_vizdoom()
    from platform_envs.doom.env import DoomEnv

    env, observation, _ = snapshots.restore(old_snapshot("doom_basic"))
    try:
        assert isinstance(env, DoomEnv)
        next_observation, *_ = env.step(0)
        assert np.asarray(next_observation).shape == np.asarray(observation).shape
    finally:
        env.close()


def test_an_atari_game_restores_onto_platform_envs() -> None:
    from platform_envs.adapters.atari import AtariEnv

    env, observation, _ = snapshots.restore(old_snapshot("atari"))
    try:
        assert isinstance(env, AtariEnv)
        assert env.step(0)[0].shape == observation.shape
    finally:
        env.close()


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("platform_sdk.adapters.atari", "platform_envs.adapters.atari"),
        ("platform_sdk.robots.arm_env", "platform_envs.robots.arm_env"),
        ("platform_sdk.robots.state", "platform_envs.mujoco_state"),
        ("platform_sdk.menagerie", "platform_envs.robots.menagerie"),
        ("platform_sdk.doom", "platform_envs.doom"),
        ("platform_sdk.world_changes", "platform_contracts.world_changes"),
        ("platform_sdk.server.world_change_timeline", "platform_envs.world_change_timeline"),
        ("platform_sdk.server.instance", "platform_sdk.server.instance"),
        ("platform_sdk.doomsday", "platform_sdk.doomsday"),
        ("numpy", "numpy"),
    ],
)
def test_each_old_module_name_maps_to_its_new_home(old: str, new: str) -> None:
    assert current_module(old) == new
