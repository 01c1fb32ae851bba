"""`platform_sdk.client.sb3_vec`: SB3's VecEnv face over a SAME_STEP Gymnasium vector environment
gives what SB3's DummyVecEnv gives (its step, auto-reset and seeding written out below, as SB3
2.x does them; SB3 itself is not in this package's environment: tests/test_e2e_sb3_vec_env.py
runs the real one against the platform)."""

from __future__ import annotations

import importlib.util
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from platform_sdk.client.sb3_vec import SB3VecFace, as_sb3_vec_env, tile_images, unbatch_infos

NUM_ENVS = 3


class _DummyVecEnvRule:
    """SB3's DummyVecEnv step and reset over local environments (stable_baselines3 2.x)."""

    def __init__(self, envs: list[gym.Env[Any, Any]]) -> None:
        self.envs = envs
        self.seeds: list[int | None] = [None] * len(envs)

    def reset(self) -> np.ndarray:
        observations = [env.reset(seed=seed)[0] for env, seed in zip(self.envs, self.seeds)]
        self.seeds = [None] * len(self.envs)
        return np.stack(observations)

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        observations, rewards, dones, infos = [], [], [], []
        for env, action in zip(self.envs, actions):
            obs, reward, terminated, truncated, info = env.step(action)
            info = dict(info)
            info["TimeLimit.truncated"] = truncated and not terminated
            if terminated or truncated:
                info["terminal_observation"] = obs
                obs, _ = env.reset()
            observations.append(obs)
            rewards.append(reward)
            dones.append(terminated or truncated)
            infos.append(info)
        return np.stack(observations), np.array(rewards, np.float32), np.array(dones), infos


def _vector(mode: AutoresetMode = AutoresetMode.SAME_STEP, max_steps: int = 30) -> SyncVectorEnv:
    return SyncVectorEnv([lambda: gym.make("CartPole-v1", max_episode_steps=max_steps) for _ in range(NUM_ENVS)],
                         autoreset_mode=mode)


def test_steps_reset_and_seeds_as_dummy_vec_env():
    face = as_sb3_vec_env(_vector())
    rule = _DummyVecEnvRule([gym.make("CartPole-v1", max_episode_steps=30) for _ in range(NUM_ENVS)])
    assert face.num_envs == NUM_ENVS
    assert face.observation_space == rule.envs[0].observation_space and face.action_space == rule.envs[0].action_space
    assert face.seed(10) == [10, 11, 12]
    rule.seeds = [10, 11, 12]
    np.testing.assert_array_equal(face.reset(), rule.reset())
    assert face.reset_infos == [{}, {}, {}]
    rng = np.random.default_rng(0)
    kinds = set()
    for _ in range(200):
        actions = rng.integers(0, 2, NUM_ENVS)
        obs, rewards, dones, infos = face.step(actions)
        want = rule.step(actions)
        np.testing.assert_array_equal(obs, want[0])
        assert rewards.dtype == np.float32 and dones.dtype == np.bool_
        np.testing.assert_array_equal(rewards, want[1])
        np.testing.assert_array_equal(dones, want[2])
        for got, expected in zip(infos, want[3]):
            assert got.keys() == expected.keys()
            assert got["TimeLimit.truncated"] == expected["TimeLimit.truncated"]
            if "terminal_observation" in expected:
                np.testing.assert_array_equal(got["terminal_observation"], expected["terminal_observation"])
                kinds.add("truncated" if got["TimeLimit.truncated"] else "terminated")
    assert kinds == {"truncated", "terminated"}  # both ends met (30-step limit, falls)
    # seeds apply once, at the next reset
    face.seed(3)
    first = face.reset()
    np.testing.assert_array_equal(first, _vector().reset(seed=[3, 4, 5])[0])
    assert not np.array_equal(face.reset(), first)


def test_observations_are_copies():
    face = as_sb3_vec_env(_vector())
    kept = face.reset()
    again = kept.copy()
    face.step(np.zeros(NUM_ENVS, dtype=np.int64))
    np.testing.assert_array_equal(kept, again)


def test_needs_same_step_autoreset():
    with pytest.raises(ValueError, match="SAME_STEP"):
        as_sb3_vec_env(_vector(AutoresetMode.NEXT_STEP))


def test_attributes_and_methods_are_the_vector_environments():
    vec = _vector()
    face = as_sb3_vec_env(vec)
    assert face.get_attr("observation_space") == [face.observation_space] * NUM_ENVS
    assert face.get_attr("num_envs", indices=[0, 2]) == [NUM_ENVS, NUM_ENVS]
    assert face.get_attr("num_envs", indices=1) == [NUM_ENVS]
    face.set_attr("note", "x")
    assert vec.note == "x"  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="all of them"):
        face.set_attr("note", "y", indices=[0])
    vec.per_env = lambda: ["a", "b", "c"]  # type: ignore[attr-defined]
    vec.whole = lambda scale: scale * 2  # type: ignore[attr-defined]
    assert face.env_method("per_env", indices=[2, 0]) == ["c", "a"]
    assert face.env_method("whole", 4, indices=[1]) == [8]
    assert face.env_is_wrapped(gym.Wrapper) == [False] * NUM_ENVS
    face.close()


@pytest.mark.skipif(importlib.util.find_spec("stable_baselines3") is not None, reason="SB3 is installed here")
def test_without_sb3_the_face_is_plain():
    assert type(as_sb3_vec_env(_vector())) is SB3VecFace


def test_unbatch_infos_follows_masks_and_nesting():
    infos = {
        "a": np.array([1, 0, 3]), "_a": np.array([True, False, True]),
        "final_info": {"x": np.array([0, 7, 0]), "_x": np.array([False, True, False])},
        "_final_info": np.array([False, True, False]),
    }
    assert unbatch_infos(infos, 3) == [{"a": 1}, {"final_info": {"x": 7}}, {"a": 3}]


def test_tile_images():
    images = [np.full((2, 3, 3), i, np.uint8) for i in range(3)]
    tiled = tile_images(images)
    assert tiled.shape == (4, 6, 3)
    assert tiled[0, 0, 0] == 0 and tiled[0, 3, 0] == 1 and tiled[2, 0, 0] == 2 and tiled[2, 3, 0] == 0
