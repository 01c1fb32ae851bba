"""Capturing and restoring an environment's full state in process (`server/snapshots.py`)."""

from __future__ import annotations

import threading

import gymnasium
import numpy as np
import pytest
from platform_sdk.server import snapshots


def _rollout(env: gymnasium.Env, actions: list[int]) -> list[tuple[list[float], float, bool, bool]]:
    """Step through `actions`, resetting (without a seed, so from env.np_random) at episode ends."""
    result = []
    for action in actions:
        obs, reward, terminated, truncated, _ = env.step(action)
        result.append((np.asarray(obs).tolist(), float(reward), terminated, truncated))
        if terminated or truncated:
            obs, _ = env.reset()
            result.append((np.asarray(obs).tolist(), 0.0, False, False))
    return result


def test_restore_replays_the_same_steps_rng_and_time_limit_included() -> None:
    env = gymnasium.make("CartPole-v1", max_episode_steps=6)
    obs, info = env.reset(seed=3)
    env.step(0)
    env.action_space.seed(11)
    snapshot = snapshots.capture(env, obs, info)
    actions = [1, 0, 1, 1, 0, 1, 0, 0, 1, 1]  # crosses the 6-step limit and resets from the RNG
    first = _rollout(env, actions)
    first_sample = [env.action_space.sample() for _ in range(5)]
    restored, restored_obs, restored_info = snapshots.restore(snapshot)
    assert np.array_equal(restored_obs, obs) and restored_info == info
    again = _rollout(restored, actions)
    assert again == first
    assert any(truncated for *_, truncated in first)  # the time limit was crossed
    assert [int(restored.action_space.sample()) for _ in range(5)] == [int(a) for a in first_sample]
    restored2, *_ = snapshots.restore(snapshot)  # a snapshot restores any number of times
    assert _rollout(restored2, actions) == first


def test_space_rngs_are_restored() -> None:
    env = gymnasium.make("Pendulum-v1")
    env.reset(seed=1)
    env.action_space.seed(5)
    snapshot = snapshots.capture(env)
    samples = [env.action_space.sample().tolist() for _ in range(4)]
    restored, _, _ = snapshots.restore(snapshot)
    assert [restored.action_space.sample().tolist() for _ in range(4)] == samples


def test_render_resources_are_left_out_and_recreated() -> None:
    env = gymnasium.make("CartPole-v1", render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()  # creates a pygame surface and clock inside the env
    assert env.unwrapped.screen is not None
    restored, _, _ = snapshots.restore(snapshots.capture(env))
    assert restored.unwrapped.screen is None and restored.unwrapped.clock is None
    assert np.array_equal(restored.render(), frame)
    env.close()
    restored.close()


def test_an_unpicklable_env_raises_snapshot_error() -> None:
    env = gymnasium.make("CartPole-v1")
    env.unwrapped.lock = threading.Lock()
    with pytest.raises(snapshots.SnapshotError, match="cannot be pickled: TypeError"):
        snapshots.capture(env)


def test_is_render_resource() -> None:
    import pygame

    assert snapshots.is_render_resource(pygame.Surface((2, 2)))
    assert not snapshots.is_render_resource(np.zeros(2))
    assert not snapshots.is_render_resource(gymnasium.make("CartPole-v1"))
