"""The built-in catalog file of DeepMind Control (`platform_broker/builtin/dm_control.toml`)."""

from __future__ import annotations

import tomllib

import pytest
from family_required import require_family

from builtin_catalog import builtin_catalog_file
from platform_envs.adapters import dmc, dmc_catalog

suite = require_family("dm_control.suite", "dmc")  # after dmc, which sets MUJOCO_GL for dm_control

CATALOG_FILE = builtin_catalog_file("dm_control.toml")


def test_the_catalog_lists_exactly_the_suite_tasks() -> None:
    entries = tomllib.loads(CATALOG_FILE.read_text())["envs"]
    assert len(entries) == len(suite.ALL_TASKS) == 51
    listed = [(entry["kwargs"]["domain"], entry["kwargs"]["task"]) for entry in entries.values()]
    assert listed == list(suite.ALL_TASKS)  # each once, in the suite's order
    for env_id, entry in entries.items():
        domain, task = entry["kwargs"]["domain"], entry["kwargs"]["task"]
        assert env_id == dmc.catalog_id(domain, task) == f"dmc-{domain}-{task}".replace("_", "-")
        assert entry["factory"] == "platform_envs.adapters.dmc:make_env"
        assert set(entry) == {"factory", "kwargs", "description", "options", "world"} and set(entry["kwargs"]) == {
            "domain",
            "task",
        }
        assert entry["description"].startswith(f"DeepMind Control {domain} {task}: ")
    assert "dmc-cartpole-swingup" in entries and "dmc-ball-in-cup-catch" in entries


def test_the_file_is_what_the_generator_writes() -> None:
    assert set(dmc_catalog.DESCRIPTIONS) == set(suite.ALL_TASKS)
    expected = dmc_catalog.render_toml(*dmc_catalog.suite_facts())
    assert CATALOG_FILE.read_text() == expected, (
        "regenerate: python -m platform_envs.adapters.dmc_catalog > " + str(CATALOG_FILE)
    )


def test_an_entrys_options_are_its_tasks_figures() -> None:
    text = CATALOG_FILE.read_text()
    data = tomllib.loads(text)
    assert data["family"] == "DeepMind Control"
    walker = data["envs"]["dmc-walker-walk"]["options"]
    env = dmc.make_env("walker", "walk")
    try:
        assert walker["substeps"]["default"] == env.metadata["substeps"] == 10
        assert "1 / (0.0025 s x substeps)" in walker["substeps"]["help"]
        assert walker["time_limit"]["default"] == env.metadata["time_limit"] == 25.0
        assert walker["camera_id"]["choices"] == [-1, 0, 1, "side", "back"]
        faster = dmc.make_env("walker", "walk", substeps=5)
        assert faster.metadata["control_rate"] == pytest.approx(2 * env.metadata["control_rate"])
        faster.close()
    finally:
        env.close()
    lqr = data["envs"]["dmc-lqr-lqr-2-1"]["options"]["time_limit"]
    assert "default" not in lqr and "none" in lqr["help"]  # null: lqr has no time limit
