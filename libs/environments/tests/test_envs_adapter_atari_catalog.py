"""The built-in catalog file of the Atari games (`platform_broker/builtin/atari.toml`)."""

from __future__ import annotations

import inspect
import tomllib

import pytest
from family_required import require_family

from builtin_catalog import builtin_catalog_file
from platform_envs.adapters import atari, atari_catalog
from platform_envs.adapters.atari_emulator import AtariError

require_family("ale_py", "atari")

CATALOG_FILE = builtin_catalog_file("atari.toml")


def test_the_file_is_what_the_generator_writes() -> None:
    assert CATALOG_FILE.read_text() == atari_catalog.render_toml(atari_catalog.all_facts()), (
        "regenerate: python -m platform_envs.adapters.atari_catalog > " + str(CATALOG_FILE)
    )


def test_the_options_are_make_envs_kwargs_with_its_defaults() -> None:
    data = tomllib.loads(CATALOG_FILE.read_text())
    assert data["family"] == "Atari"
    parameters = inspect.signature(atari.make_env).parameters
    for name, option in data["options"].items():
        assert name in parameters
        assert option.get("default") == parameters[name].default, name  # null: None
    for entry in data["envs"].values():
        assert set(entry["options"]) == {"mode", "difficulty"} <= set(parameters)


def test_a_games_mode_choices_are_the_modes_it_has() -> None:
    pong = tomllib.loads(CATALOG_FILE.read_text())["envs"]["pong"]["options"]
    assert pong["mode"]["choices"] == [0, 1] and pong["difficulty"]["choices"] == [0, 1, 2, 3]
    env = atari.make_env("pong", mode=1, difficulty=3)
    env.close()
    with pytest.raises(AtariError, match="pong has no mode 2"):
        atari.make_env("pong", mode=2)


def test_frameskip_sets_the_control_rate_its_help_says() -> None:
    help_text = tomllib.loads(CATALOG_FILE.read_text())["options"]["frameskip"]["help"]
    assert "metadata.control_rate = 60 / frameskip" in help_text
    env = atari.make_env("pong", frameskip=2)
    assert env.metadata["control_rate"] == 30
    env.close()
