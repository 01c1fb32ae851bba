"""The built-in catalog file of DeepMind Control (`platform_broker/builtin/dm_control.toml`)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

pytest.importorskip("dm_control")

from platform_sdk.adapters import dmc, dmc_catalog

suite = pytest.importorskip("dm_control.suite")  # after dmc, which sets MUJOCO_GL for dm_control

CATALOG_FILE = Path(__file__).parents[2] / "services/broker/src/platform_broker/builtin/dm_control.toml"


def test_the_catalog_lists_exactly_the_suite_tasks() -> None:
    entries = tomllib.loads(CATALOG_FILE.read_text())["envs"]
    assert len(entries) == len(suite.ALL_TASKS) == 51
    listed = [(entry["kwargs"]["domain"], entry["kwargs"]["task"]) for entry in entries.values()]
    assert listed == list(suite.ALL_TASKS)  # each once, in the suite's order
    for env_id, entry in entries.items():
        domain, task = entry["kwargs"]["domain"], entry["kwargs"]["task"]
        assert env_id == dmc.catalog_id(domain, task) == f"dmc-{domain}-{task}".replace("_", "-")
        assert entry["factory"] == "platform_sdk.adapters.dmc:make_env"
        assert set(entry) == {"factory", "kwargs", "description"} and set(entry["kwargs"]) == {
            "domain",
            "task",
        }
        assert entry["description"].startswith(f"DeepMind Control {domain} {task}: ")
    assert "dmc-cartpole-swingup" in entries and "dmc-ball-in-cup-catch" in entries


def test_the_file_is_what_the_generator_writes() -> None:
    assert set(dmc_catalog.DESCRIPTIONS) == set(suite.ALL_TASKS)
    expected = dmc_catalog.render_toml(list(suite.ALL_TASKS))
    assert CATALOG_FILE.read_text() == expected, (
        "regenerate: python -m platform_sdk.adapters.dmc_catalog > " + str(CATALOG_FILE)
    )
