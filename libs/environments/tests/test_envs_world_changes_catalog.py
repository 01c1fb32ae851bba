"""The built-in catalog files' `world` tables (what the broker checks a world-change timeline
against at create) are the live environments' facts (what the environment server checks)."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest
from builtin_catalog import BUILTIN
from platform_contracts.world_changes import WorldFacts
from platform_envs.world_change_effects import live_facts
from platform_sdk.server.factory import build_env

BUILTIN = BUILTIN


def _entries(name: str) -> dict[str, Any]:
    return tomllib.loads((BUILTIN / name).read_text(encoding="utf-8"))["envs"]


def _live(entry: dict[str, Any]) -> WorldFacts:
    env, _ = build_env(entry.get("gymnasium_id", ""), entry.get("factory", ""), kwargs=entry.get("kwargs", {}))
    try:
        return live_facts(env)
    finally:
        env.close()


@pytest.mark.parametrize(("file", "env_id"), [
    ("gymnasium_mujoco.toml", "halfcheetah"),
    ("gymnasium_mujoco.toml", "ant"),
    ("gymnasium_mujoco.toml", "pusher"),
    ("dm_control.toml", "dmc-walker-walk"),
    ("dm_control.toml", "dmc-cartpole-swingup"),
    ("dm_control.toml", "dmc-manipulator-bring-ball"),
    *(("classic_control.toml", env_id) for env_id in _entries("classic_control.toml")),
])
def test_an_entrys_world_table_is_its_live_facts(file: str, env_id: str) -> None:
    entry = _entries(file)[env_id]
    assert WorldFacts.from_mapping(entry["world"]) == _live(entry)


def test_every_generated_and_hand_written_entry_has_a_world_table() -> None:
    for file in ("gymnasium_mujoco.toml", "dm_control.toml", "classic_control.toml", "atari.toml"):
        for env_id, entry in _entries(file).items():
            facts = WorldFacts.from_mapping(entry["world"])
            assert facts.mujoco == (file in ("gymnasium_mujoco.toml", "dm_control.toml")), env_id
            if facts.mujoco:
                assert facts.bodies and facts.geoms and facts.observation_size, env_id


def test_atari_screens_take_sensor_changes_and_leave_their_size_to_the_instance() -> None:
    entry = _entries("atari.toml")["pong"]
    assert WorldFacts.from_mapping(entry["world"]) == WorldFacts(mujoco=False, observation_size=None)
    live = _live(entry)
    assert (live.mujoco, live.sensors, live.observation_size) == (False, True, 210 * 160 * 3)
