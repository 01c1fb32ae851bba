"""A session end to end: SDK -> gateway -> env host -> environment server, real processes."""

from __future__ import annotations

import httpx
import numpy as np
import platform_sdk
import pytest
from gymnasium.utils.env_checker import check_env


def rollout(env, actions, seed=None):
    obs, _ = env.reset(seed=seed) if seed is not None else (None, None)
    trajectory = [obs] if obs is not None else []
    rewards = []
    for a in actions:
        obs, reward, term, trunc, _ = env.step(a)
        trajectory.append(obs)
        rewards.append(reward)
        if term or trunc:
            break
    return np.array(trajectory), np.array(rewards)


def test_readme_example_runs(platform_stack):
    with platform_sdk.connect("cartpole", url=platform_stack.url) as env:
        obs, _info = env.reset(seed=0)
        assert env.observation_space.contains(obs)
        obs, reward, _terminated, truncated, _info = env.step(env.action_space.sample())
        assert reward == 1.0 and not truncated
        handle = env.snapshot()
        after_snapshot, reward, *_ = env.step(1)
        restored, info = env.restore(handle)
        assert np.array_equal(restored, obs)
        assert 0 < info["restore_s"] < 10  # the environment server's own time to restore
        again, *_ = env.step(1)
        assert np.array_equal(again, after_snapshot)


def test_gymnasium_check_env_passes_on_the_remote_env(platform_stack):
    with platform_sdk.connect("cartpole", url=platform_stack.url) as env:
        check_env(env, skip_render_check=False)


def test_same_seed_same_actions_same_trajectory(platform_stack):
    actions = [int(a) for a in np.random.default_rng(3).integers(0, 2, 60)]
    with platform_sdk.connect("cartpole", url=platform_stack.url) as a, platform_sdk.connect(
        "cartpole", url=platform_stack.url
    ) as b:
        obs_a, rew_a = rollout(a, actions, seed=42)
        obs_b, rew_b = rollout(b, actions, seed=42)
    assert obs_a.shape[0] > 5
    assert np.array_equal(obs_a, obs_b) and np.array_equal(rew_a, rew_b)


def test_restore_replays_exactly_including_the_rng_and_time_limit(platform_stack):
    with platform_sdk.connect("pendulum", url=platform_stack.url) as env:
        env.reset(seed=7)
        for _ in range(190):
            env.step(np.array([0.5], dtype=np.float32))
        handle = env.snapshot()
        rng = np.random.default_rng(0)
        actions = [rng.uniform(-2, 2, (1,)).astype(np.float32) for _ in range(20)]
        first = [env.step(a) for a in actions]
        env.restore(handle)
        second = [env.step(a) for a in actions]
    for x, y in zip(first, second):
        assert np.array_equal(x[0], y[0]) and x[1] == y[1] and x[3] == y[3]
    assert first[9][3] is True, "the 200-step time limit falls inside the replay"


def test_a_doom_restore_says_how_long_its_replay_took_longer_for_a_longer_episode(platform_stack):
    # A Doom snapshot is its episode's seed and actions, replayed on restore (docs/doom.md).
    url = platform_stack.url
    with platform_sdk.connect("doom-basic", url=url, kwargs={"max_episode_steps": 1000}) as env:
        env.reset(seed=3)
        handles = {}
        for steps, more in ((10, 10), (200, 190)):
            for _ in range(more):
                *_, terminated, truncated, _info = env.step(0)  # NOOP: basic's monster lives on
                assert not (terminated or truncated)
            handles[steps] = env.snapshot()
        seconds: dict[int, list[float]] = {10: [], 200: []}
        for _ in range(5):  # each restore five times: the least of each is the replay, not a busy machine
            for steps, handle in handles.items():
                _obs, info = env.restore(handle)
                seconds[steps].append(info["restore_s"])
        assert all(0 < s < 30 for times in seconds.values() for s in times), seconds
        # longer, by a margin the machine's speed decides: a fixed cost (a few ms) comes with
        # every restore, and 190 more steps added 2 ms on a fast run, 1.4 times the 10-step one
        assert min(seconds[200]) > min(seconds[10]), seconds
        rest = httpx.post(f"{url}/v0/sessions/{env.session_id}/restore", json={"handle": handles[200]}, timeout=60)
        assert rest.status_code == 200, rest.text
        assert 0 < rest.json()["restore_s"] < 30  # the gateway's answer says it too


@pytest.mark.parametrize("env_id", ["cartpole", "acrobot", "mountaincar", "pendulum"])
def test_every_builtin_environment_steps_and_renders(platform_stack, env_id):
    with platform_sdk.connect(env_id, url=platform_stack.url) as env:
        obs, _ = env.reset(seed=1)
        assert env.observation_space.contains(obs)
        obs, reward, *_ = env.step(env.action_space.sample())
        assert env.observation_space.contains(obs) and np.isfinite(reward)
        frame = env.render()
        assert frame.ndim == 3 and frame.shape[2] == 3 and frame.dtype == np.uint8 and frame.std() > 0
