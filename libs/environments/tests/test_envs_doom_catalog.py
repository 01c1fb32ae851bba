"""The built-in catalog file of Doom (`platform_broker/builtin/doom.toml`) and how the platform
hosts its entries."""

from __future__ import annotations

import inspect
import math
import tomllib

from builtin_catalog import builtin_catalog_file
from doom_required import require_vizdoom
from platform_envs.doom import catalog, env, make_env
from platform_envs.doom.errors import import_vizdoom
from platform_envs.doom.scenarios import SCENARIOS
from platform_sdk.server.factory import ENDLESS_FACTORY_KWARGS

require_vizdoom()

CATALOG_FILE = builtin_catalog_file("doom.toml")


def test_the_file_is_what_the_generator_writes() -> None:
    assert CATALOG_FILE.read_text() == catalog.render_toml(), (
        "regenerate: python -m platform_envs.doom.catalog > " + str(CATALOG_FILE)
    )


def test_the_options_are_make_envs_kwargs_with_its_defaults() -> None:
    data = tomllib.loads(CATALOG_FILE.read_text())
    assert data["family"] == "Doom"
    parameters = inspect.signature(make_env).parameters
    assert set(data["options"]) == {"tics", "action_set", "labels", "depth", "max_episode_steps", "variables"}
    for name, option in data["options"].items():
        assert name in parameters and option["help"], name
        default = parameters[name].default
        assert option.get("default") == (list(default) if isinstance(default, tuple) else default), name  # null: None
    assert data["options"]["variables"]["choices"] == list(import_vizdoom().GameVariable.__members__)
    # wad and doom_map are make_env's too, set by the web app's WAD picker: the header says so
    assert {"wad", "doom_map"} <= set(parameters) and "`doom_map`" in CATALOG_FILE.read_text().split("family =")[0]


def test_every_entry_names_a_scenario_and_has_no_mujoco_world() -> None:
    entries = tomllib.loads(CATALOG_FILE.read_text())["envs"]
    assert list(entries) == list(catalog.ENTRIES)
    for env_id, entry in entries.items():
        assert entry["factory"] == "platform_envs.doom:make_env" == catalog.FACTORY
        assert entry["kwargs"]["scenario"] in SCENARIOS and entry["description"], env_id
        assert entry["world"] == {"mujoco": False}


def test_tics_set_the_control_rate_its_help_says() -> None:
    help_text = tomllib.loads(CATALOG_FILE.read_text())["options"]["tics"]["help"]
    assert "metadata.control_rate = 35 / tics" in help_text
    doom = make_env("basic", tics=5)
    assert doom.metadata["control_rate"] == 7 == env.TICS_PER_SECOND / 5
    doom.close()


def test_endless_sessions_turn_the_time_limit_off() -> None:
    assert ENDLESS_FACTORY_KWARGS[catalog.FACTORY] == {"max_episode_steps": math.inf}
