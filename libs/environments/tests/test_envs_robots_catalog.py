"""The built-in catalog file of the Menagerie robots (`platform_broker/builtin/menagerie.toml`):
what its generator writes, and every entry building through make_env as the broker would start it."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from builtin_catalog import builtin_catalog_file
from gymnasium import spaces
from platform_envs.robots import make_env, menagerie_catalog

CATALOG_FILE = builtin_catalog_file("menagerie.toml")
IDS = [
    "menagerie-franka-emika-panda-reach",
    "menagerie-franka-emika-panda-reach-by-hand",
    "menagerie-franka-emika-panda-pick-place",
    "menagerie-ufactory-xarm7-reach",
    "menagerie-ufactory-xarm7-reach-by-hand",
    "menagerie-ufactory-xarm7-pick-place",
    "menagerie-unitree-h1-stand",
    "menagerie-unitree-h1-walk",
    "menagerie-unitree-g1-stand",
    "menagerie-unitree-g1-walk",
    "menagerie-booster-t1-stand",
    "menagerie-booster-t1-walk",
]
ARM_OPTIONS = ["substeps", "time_limit", "render_quality", "control", "hand_step", "hand_levels", "workspace", "camera"]


@pytest.fixture(autouse=True, scope="module")
def _robots_here(menagerie_root: Path) -> None:
    """The robots (menagerie_root: sdk/tests/conftest.py) and the generated file."""
    if not CATALOG_FILE.is_file():
        pytest.fail(f"no {CATALOG_FILE}: python -m platform_envs.robots.menagerie_catalog writes it")


def _entries() -> dict[str, Any]:
    entries: dict[str, Any] = tomllib.loads(CATALOG_FILE.read_text())["envs"]
    return entries


def _options(env_id: str) -> dict[str, Any]:
    """The entry's options merged over the file's, as the broker merges them."""
    data = tomllib.loads(CATALOG_FILE.read_text())
    merged = {name: dict(table) for name, table in data["options"].items()}
    for name, table in data["envs"][env_id].get("options", {}).items():
        merged[name] = {**merged.get(name, {}), **table}
    return merged


def _started(env_id: str, **kwargs: Any) -> Any:
    """The entry's environment as a session with `kwargs` starts it: the entry's kwargs, then every
    declared option's default, then `kwargs`."""
    entry = _entries()[env_id]
    defaults = {name: table["default"] for name, table in _options(env_id).items() if "default" in table}
    return make_env(**{**defaults, **entry["kwargs"], **kwargs})


def test_the_file_is_what_the_generator_writes() -> None:
    assert CATALOG_FILE.read_text() == menagerie_catalog.catalog_text(), (
        "regenerate: python -m platform_envs.robots.menagerie_catalog (from the repository's root)"
    )


def test_the_twelve_entries_and_their_kwargs() -> None:
    data = tomllib.loads(CATALOG_FILE.read_text())
    assert data["family"] == "MuJoCo Menagerie"
    entries = data["envs"]
    assert list(entries) == IDS
    for env_id, entry in entries.items():
        assert entry["factory"] == "platform_envs.robots:make_env"
        assert set(entry) == {"factory", "kwargs", "description", "world", "options"}
        by_hand = env_id.endswith("-reach-by-hand")
        assert set(entry["kwargs"]) == {"robot", "task", *(["control"] if by_hand else [])}
        if by_hand:
            assert entry["kwargs"]["control"] == "hand_steps"
        assert entry["world"]["mujoco"] is True and "\n" not in entry["description"]
    arm = list(_options("menagerie-franka-emika-panda-reach"))
    assert arm == ARM_OPTIONS
    assert list(_options("menagerie-unitree-h1-walk")) == ARM_OPTIONS[:3]  # no hand control on humanoids


@pytest.mark.parametrize("env_id", IDS)
def test_every_entry_builds_with_its_kwargs_and_declared_defaults(env_id: str) -> None:
    entry = _entries()[env_id]
    options = _options(env_id)
    env = _started(env_id)
    try:
        metadata = env.metadata
        assert metadata["robot"] == entry["kwargs"]["robot"]
        assert metadata["substeps"] == options["substeps"]["default"]
        assert metadata["time_limit"] == options["time_limit"]["default"]
        assert metadata["render_quality"] == options["render_quality"]["default"]
        step = metadata["physics_timestep"]
        assert metadata["control_rate"] == pytest.approx(1.0 / (step * metadata["substeps"]))
        assert f"1/({step:g} s x substeps)" in options["substeps"]["help"]
        rate = f"{metadata['control_rate']:g} decisions a second"
        assert rate in entry["description"] and rate in options["substeps"]["help"]
        if "control" in options:
            assert metadata["control"] == options["control"]["default"]
            assert env.settings.hand_levels == options["hand_levels"]["default"] == 5
            assert env.settings.hand_step == options["hand_step"]["default"] == 0.02
            assert env.settings.workspace == options["workspace"]["default"] == 0.3
            assert options["camera"]["default"] in options["camera"]["choices"]
        # the world table and the description say what the built environment is
        assert entry["world"] == menagerie_catalog.world_table(env)
        assert entry["world"]["observation_size"] == env.observation_space.shape[0]
        assert set(entry["world"]["actuators"]) == {env.model.actuator(i).name for i in range(env.model.nu)}
        observation, _ = env.reset(seed=0)
        assert observation.shape == (entry["world"]["observation_size"],)
        for name, _, _ in env.get_observation_labels():
            assert name in entry["description"]
        env.action_space.seed(0)
        _, _, _, _, info = env.step(env.action_space.sample())
        assert all(term in entry["description"] for term in info["reward_terms"])
        frame = env.render()
        assert frame is not None and frame.shape == (240, 320, 3)
    finally:
        env.close()


def test_substeps_100_on_the_panda_gives_5_decisions_a_second() -> None:
    env = _started("menagerie-franka-emika-panda-reach", substeps=100)
    assert env.metadata["control_rate"] == 5.0 and env.metadata["render_fps"] == 5
    help_text = _options("menagerie-franka-emika-panda-reach")["substeps"]["help"]
    assert "100 gives 5" in help_text and "25 gives 20 decisions a second" in help_text
    env.reset(seed=0)
    before = env.data.time
    env.step(env.action_space.sample())
    assert env.data.time - before == pytest.approx(0.2)
    assert _started("menagerie-franka-emika-panda-pick-place").metadata["control_rate"] == 5.0


@pytest.mark.parametrize("env_id", ["menagerie-franka-emika-panda-reach-by-hand", "menagerie-ufactory-xarm7-reach-by-hand"])
def test_reach_by_hand_is_stepped_hand_control(env_id: str) -> None:
    env = _started(env_id)
    assert env.action_space == spaces.MultiDiscrete([5, 5, 5, 2])
    assert env.metadata["control"] == "hand_steps"
    assert env.metadata["action_names"] == ["hand_x", "hand_y", "hand_z", "gripper"]
    env.reset(seed=0)
    _, _, _, _, info = env.step(np.array([2, 2, 2, 0]))  # stay, gripper open
    assert "is_success" in info
    three = _started(env_id, hand_levels=3)
    assert three.action_space == spaces.MultiDiscrete([3, 3, 3, 2])


def test_pick_place_entries_suggest_teacher_actions() -> None:
    for env_id in ("menagerie-franka-emika-panda-pick-place", "menagerie-ufactory-xarm7-pick-place"):
        env = _started(env_id)
        _, info = env.reset(seed=0)
        assert env.action_space.contains(np.array(info["teacher_action"]))
        assert "info teacher_action" in _entries()[env_id]["description"]
        workspace_help = _options(env_id)["workspace"]["help"]
        assert "hand control needs at least 0.29" in workspace_help
