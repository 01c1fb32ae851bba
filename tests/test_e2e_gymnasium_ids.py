"""Sessions by Gymnasium id (`platform_sdk.gym_ids`): `gym.make("simulusion/<catalog id>")` opens
a session, `gym.make_vec(...)` one batched session, against the real platform."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import platform_sdk
import platform_sdk.gym_ids  # registers the built-in catalog's ids
import pytest
from gymnasium.vector import AutoresetMode
from platform_sdk.client.remote_env import RemoteEnv
from platform_sdk.client.vector_env import RemoteVectorEnv


def test_make_by_id_opens_a_session_at_platform_url(platform_stack, monkeypatch):
    monkeypatch.setenv("PLATFORM_URL", platform_stack.url)
    env = gym.make("simulusion/cartpole")
    try:
        assert isinstance(env.unwrapped, RemoteEnv) and env.unwrapped.env_id == "cartpole"
        assert env.spec.id == "simulusion/cartpole" and env.spec.max_episode_steps == 500
        local = gym.make("CartPole-v1")
        obs, _ = env.reset(seed=3)
        expected, _ = local.reset(seed=3)
        np.testing.assert_array_equal(obs, expected)
        for _ in range(30):
            got, want = env.step(1), local.step(1)
            np.testing.assert_array_equal(got[0], want[0])
            assert got[1:4] == want[1:4]
            if got[2] or got[3]:
                break
    finally:
        env.close()


def test_environment_kwargs_and_sdk_options_are_split(platform_stack):
    env = gym.make("simulusion/cartpole", url=platform_stack.url, record=True, sutton_barto_reward=True)
    try:
        remote = env.unwrapped
        assert remote.settings.record is True and remote.settings.url == platform_stack.url
        env.reset(seed=0)
        rewards = [env.step(0)[1] for _ in range(3)]
        assert rewards == [0.0, 0.0, 0.0]  # Sutton and Barto's reward: 0 per step until the end
        assert env.spec.kwargs["sutton_barto_reward"] is True
    finally:
        env.close()


def test_bad_kwarg_is_the_platforms_error(platform_stack):
    with pytest.raises(platform_sdk.InvalidRequestError, match="no_such_kwarg"):
        gym.make("simulusion/cartpole", url=platform_stack.url, no_such_kwarg=1)


def test_unknown_id_is_gymnasiums_error():
    with pytest.raises(gym.error.Error, match="`nope` doesn.t exist in namespace simulusion"):
        gym.make("simulusion/nope")


def test_make_vec_by_id_is_one_batched_session_of_16(platform_stack, monkeypatch):
    monkeypatch.setenv("PLATFORM_URL", platform_stack.url)
    envs = gym.make_vec("simulusion/cartpole", 16)
    try:
        assert isinstance(envs, RemoteVectorEnv) and envs.num_envs == 16
        assert envs.spec.id == "simulusion/cartpole" and envs.spec.kwargs["vectorization_mode"] == "vector_entry_point"
        assert envs.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
        local = gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1") for _ in range(16)])
        obs, _ = envs.reset(seed=11)
        np.testing.assert_array_equal(obs, local.reset(seed=11)[0])
        rng = np.random.default_rng(0)
        ended = 0
        for _ in range(60):
            actions = rng.integers(0, 2, 16)
            got, want = envs.step(actions), local.step(actions)
            for a, b in zip(got[:4], want[:4]):
                np.testing.assert_array_equal(a, b)
            ended += int(np.logical_or(got[2], got[3]).sum())
        assert ended > 0
    finally:
        envs.close()


def test_make_vec_by_id_passes_options_and_a_new_limit(platform_stack):
    envs = gym.make_vec("simulusion/cartpole", 2, url=platform_stack.url, autoreset_mode="SameStep",
                        max_episode_steps=5)
    try:
        assert envs.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
        envs.reset(seed=0)
        steps = [envs.step(np.zeros(2, dtype=np.int64)) for _ in range(5)]
        assert not any(s[2].any() or s[3].any() for s in steps[:4])
        assert steps[4][3].all() and not steps[4][2].any()  # the platform truncates at step 5
        assert "final_obs" in steps[4][4]
    finally:
        envs.close()


def test_register_catalog_reads_the_platforms_catalog(platform_stack):
    names = platform_sdk.register_catalog(url=platform_stack.url)
    assert "simulusion/cartpole" in names and "simulusion/nope" not in names
    assert gym.spec("simulusion/cartpole").max_episode_steps == 500
