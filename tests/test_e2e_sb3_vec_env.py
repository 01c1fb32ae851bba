"""Stable-Baselines3 on one batched session: `make_vec(..., auto_reset=True).sb3()` is an SB3
`VecEnv` that gives what SB3's `DummyVecEnv` of local CartPoles gives, step for step, and PPO
learns the same curve on it. Needs the root project's `sb3` group (SB3 and torch), which
`make test` installs for tests/ (scripts/test_members.py); by hand: `uv sync --all-packages --group sb3`."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import platform_sdk

try:
    import stable_baselines3  # noqa: F401
except ImportError as exc:  # a failure naming what is missing, not a skip
    raise ImportError("Stable-Baselines3 is missing: `make test` installs the root project's sb3 group "
                      "(uv sync --all-packages --group sb3)") from exc

import torch
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv, VecMonitor

NUM_ENVS = 4


def _local() -> DummyVecEnv:
    return DummyVecEnv([lambda: gym.make("CartPole-v1") for _ in range(NUM_ENVS)])


def test_face_steps_as_dummy_vec_env(platform_stack):
    face = platform_sdk.make_vec("cartpole", NUM_ENVS, url=platform_stack.url, auto_reset=True).sb3()
    local = _local()
    try:
        assert isinstance(face, VecEnv) and face.num_envs == NUM_ENVS
        assert face.observation_space == local.observation_space and face.action_space == local.action_space
        assert face.seed(5) == local.seed(5) == [5, 6, 7, 8]
        np.testing.assert_array_equal(face.reset(), local.reset())
        assert len(face.reset_infos) == NUM_ENVS
        rng = np.random.default_rng(1)
        ended = 0
        for _ in range(150):
            actions = rng.integers(0, 2, NUM_ENVS)
            obs, rewards, dones, infos = face.step(actions)
            want_obs, want_rewards, want_dones, want_infos = local.step(actions)
            np.testing.assert_array_equal(obs, want_obs)
            assert rewards.dtype == np.float32 and dones.dtype == np.bool_
            np.testing.assert_array_equal(rewards, want_rewards)
            np.testing.assert_array_equal(dones, want_dones)
            for got, want in zip(infos, want_infos):
                assert got["TimeLimit.truncated"] == want["TimeLimit.truncated"]
                assert ("terminal_observation" in got) == ("terminal_observation" in want)
                if "terminal_observation" in want:
                    np.testing.assert_array_equal(got["terminal_observation"], want["terminal_observation"])
            ended += int(dones.sum())
        assert ended > 0
        assert face.get_attr("render_mode") == ["rgb_array"] * NUM_ENVS == [face.render_mode] * NUM_ENVS
        frames = face.get_images()
        assert len(frames) == NUM_ENVS and frames[0].shape[2] == 3 and frames[0].dtype == np.uint8
        tiled = face.render("rgb_array")
        assert tiled.shape == (2 * frames[0].shape[0], 2 * frames[0].shape[1], 3)  # 4 frames on a 2 x 2 grid
        assert face.get_attr("observation_space", indices=[1, 2]) == [face.observation_space] * 2
        assert face.env_is_wrapped(gym.Wrapper) == [False] * NUM_ENVS
        handles = face.env_method("snapshot", indices=[0, 3])
        assert len(handles) == 2 and all(isinstance(h, str) and h for h in handles)
    finally:
        face.close()
        local.close()


class _Returns(BaseCallback):
    """Every finished episode's return, in the order SB3 saw them."""

    def __init__(self) -> None:
        super().__init__()
        self.returns: list[float] = []

    def _on_step(self) -> bool:
        self.returns += [float(info["episode"]["r"]) for info in self.locals["infos"] if "episode" in info]
        return True


def _learn(venv: VecEnv) -> list[float]:
    callback = _Returns()
    model = PPO("MlpPolicy", VecMonitor(venv), n_steps=256, batch_size=128, n_epochs=3, seed=0, device="cpu")
    model.learn(4096, callback=callback)
    venv.close()
    return callback.returns


def test_ppo_learns_the_same_curve_as_on_dummy_vec_env(platform_stack):
    torch.set_num_threads(1)  # the same arithmetic in both runs, and no fight for the test machine's cores
    remote = _learn(platform_sdk.make_vec("cartpole", NUM_ENVS, url=platform_stack.url, auto_reset=True).sb3())
    local = _learn(_local())
    assert len(remote) > 100
    assert remote == local
    assert np.mean(local[-20:]) > np.mean(local[:20])  # it learned something
