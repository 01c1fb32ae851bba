"""The built-in catalog file of Gymnasium's MuJoCo tasks (`platform_broker/builtin/gymnasium_mujoco.toml`)."""

from __future__ import annotations

import tomllib

import gymnasium
import pytest
from family_required import require_family

from builtin_catalog import builtin_catalog_file
from platform_envs.adapters import gym_mujoco, gym_mujoco_catalog

require_family("mujoco", "mujoco")

CATALOG_FILE = builtin_catalog_file("gymnasium_mujoco.toml")


def test_the_file_is_what_the_generator_writes() -> None:
    assert CATALOG_FILE.read_text() == gym_mujoco_catalog.render_toml(gym_mujoco_catalog.all_facts()), (
        "regenerate: python -m platform_envs.adapters.gym_mujoco_catalog > " + str(CATALOG_FILE)
    )


def test_an_entrys_options_are_its_tasks_kwargs_and_defaults() -> None:
    data = tomllib.loads(CATALOG_FILE.read_text())
    assert data["family"] == "Gymnasium MuJoCo"
    hopper = data["envs"]["hopper"]["options"]
    assert hopper["frame_skip"]["default"] == 4
    assert hopper["max_episode_steps"]["default"] == gymnasium.spec("Hopper-v5").max_episode_steps == 1000
    assert hopper["reset_noise_scale"] == {
        "type": "float", "default": 0.005, "minimum": 0.0, "maximum": 1_000_000.0,
        "help": "Scale of the random noise on the initial positions and velocities at reset.",
    }
    assert data["envs"]["reacher"]["options"]["max_episode_steps"]["default"] == 50
    assert "healthy_reward" not in data["envs"]["halfcheetah"]["options"]  # HalfCheetah has none


def test_frame_skip_sets_the_control_rate_its_help_says() -> None:
    hopper = tomllib.loads(CATALOG_FILE.read_text())["envs"]["hopper"]["options"]["frame_skip"]
    assert "1 / (0.002 s x frame_skip)" in hopper["help"] and "(125 at the task's 4)" in hopper["help"]
    env = gym_mujoco.make_env("Hopper", frame_skip=2, render_mode=None, reset_noise_scale=0.0)
    assert env.unwrapped.metadata["control_rate"] == pytest.approx(250)
    env.close()
