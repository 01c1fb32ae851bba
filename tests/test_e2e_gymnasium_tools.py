"""Remote environments under Gymnasium's own tools, against the real platform: `check_env` with
its render and close checks (which make new environments from `env.spec`), `env.spec` (the
catalog id and the environment server's `max_episode_steps`), `TimeLimit`, and `reset()` after
`close()` opening a new session with the same settings."""

from __future__ import annotations

import warnings

import gymnasium as gym
import httpx
import numpy as np
import platform_sdk
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.wrappers import TimeLimit
from platform_sdk import errors


def session_state(url: str, session_id: str) -> str:
    return str(httpx.get(f"{url}/v0/sessions/{session_id}", timeout=10).json()["state"]).lower()


def running_ids(url: str) -> set[str]:
    return {session["id"] for session in httpx.get(f"{url}/v0/sessions", timeout=10).json()["data"]}


def test_check_env_passes_with_its_render_and_close_checks(platform_stack):
    before = running_ids(platform_stack.url)
    with platform_sdk.connect("cartpole", url=platform_stack.url) as env:
        assert env.spec is not None  # check_env makes new sessions from it for the render and close checks
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_env(env)
        assert not [str(w.message) for w in caught if "spec" in str(w.message)]
        assert running_ids(platform_stack.url) - before == {env.session_id}  # the checks' sessions were closed


def test_spec_has_the_catalog_id_and_the_environments_step_limit(platform_stack):
    with platform_sdk.connect("cartpole", url=platform_stack.url) as env:
        assert env.env == "cartpole"
        assert isinstance(env.spec, gym.envs.registration.EnvSpec)
        assert (env.spec.id, env.spec.max_episode_steps) == ("cartpole", 500)
    with platform_sdk.connect("pendulum", url=platform_stack.url) as env:
        assert env.spec.max_episode_steps == 200
    with platform_sdk.connect("dmc-cartpole-balance", url=platform_stack.url, kwargs={"time_limit": 0.5}) as env:
        assert env.spec.max_episode_steps == 50  # the task's own limit: 0.5 s at 100 decisions a second
    with platform_sdk.connect("cartpole", url=platform_stack.url, kwargs={"endless": True}) as env:
        assert env.spec.max_episode_steps is None and env.spec.kwargs == {"endless": True}


def test_a_vector_session_has_the_same_spec(platform_stack):
    with platform_sdk.make_vec("cartpole", 2, url=platform_stack.url) as env:
        assert env.env == "cartpole"
        assert env.spec is not None and (env.spec.id, env.spec.max_episode_steps) == ("cartpole", 500)


def test_time_limit_wraps_it(platform_stack):
    with platform_sdk.connect("cartpole", url=platform_stack.url) as remote:
        env = TimeLimit(remote, max_episode_steps=remote.spec.max_episode_steps)
        assert env.spec is not None and env.spec.max_episode_steps == 500
        short = TimeLimit(remote, max_episode_steps=5)
        short.reset(seed=0)
        ends = [short.step(step % 2)[2:4] for step in range(5)]
        assert ends == [(False, False)] * 4 + [(False, True)]
        made = gym.make(remote.spec)  # a new session, with Gymnasium's wrappers (TimeLimit from the spec)
        try:
            assert made.spec is not None and made.spec.max_episode_steps == 500
            made.reset(seed=0)
            assert made.unwrapped.session_id != remote.session_id
        finally:
            made.close()


def test_reset_after_close_opens_a_new_session_with_the_same_settings(platform_stack):
    env = platform_sdk.connect("cartpole", url=platform_stack.url, kwargs={"max_episode_steps": 7})
    first = env.session_id
    observation, _ = env.reset(seed=4)
    env.close()
    env.close()  # harmless
    assert session_state(platform_stack.url, first) == "closed"
    with pytest.raises(errors.SessionClosedError, match=rf"session {first} \(cartpole\) is closed: reset\(\)"):
        env.step(0)
    again, _ = env.reset(seed=4)
    try:
        assert env.session_id != first and session_state(platform_stack.url, env.session_id) != "closed"
        np.testing.assert_array_equal(again, observation)
        truncated = [env.step(step % 2)[3] for step in range(7)]
        assert truncated == [False] * 6 + [True]  # the kwargs came along: max_episode_steps 7
    finally:
        env.close()
    assert session_state(platform_stack.url, env.session_id) == "closed"
