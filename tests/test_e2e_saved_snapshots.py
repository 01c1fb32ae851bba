"""Saved snapshots survive restarts of every service; `resume` carries on exactly."""

from __future__ import annotations

import httpx
import numpy as np
import platform_sdk
import pytest
from platform_testing.platform import running_platform

SERVICES = ("recorder", "envhost", "broker", "gateway", "nats")


def _rollout(env, actions):
    return [env.step(a) for a in actions]


def test_resume_after_restarting_every_service_continues_exactly(tmp_path):
    actions = [1, 0, 0, 1, 1, 0, 1, 0] * 4
    with running_platform(tmp_path / "platform") as stack:
        with platform_sdk.connect("dmc-cartpole-swingup", url=stack.url, record=True) as env:
            env.reset(seed=11)
            for a in (0.3, -0.5, 0.8):
                env.step(np.array([a]))
            saved = env.save_snapshot("before the swing")
            original = _rollout(env, [np.array([a * 0.25]) for a in actions])
        assert saved["id"] and saved["label"] == "before the swing" and saved["env_id"] == "dmc-cartpole-swingup"

        for name in SERVICES:
            stack.restart(name)
        stack.wait_ready()

        listed = httpx.get(f"{stack.url}/v0/snapshots", params={"env_id": "dmc-cartpole-swingup"}).json()
        assert [s["id"] for s in listed["data"]] == [saved["id"]]

        with platform_sdk.resume(saved["id"], url=stack.url) as again:
            observation, info = again.resumed
            assert 0 < info["restore_s"] < 10
            continued = _rollout(again, [np.array([a * 0.25]) for a in actions])
        for (obs_a, r_a, term_a, trunc_a, _), (obs_b, r_b, term_b, trunc_b, _) in zip(original, continued):
            for key in obs_a:
                np.testing.assert_array_equal(obs_a[key], obs_b[key])
            assert (r_a, term_a, trunc_a) == (r_b, term_b, trunc_b)
        assert set(observation) == set(original[0][0])


def test_restore_saved_in_a_running_session_and_its_errors(platform_stack):
    url = platform_stack.url
    with platform_sdk.connect("cartpole", url=url) as env:
        env.reset(seed=5)
        env.step(1)
        saved = env.save_snapshot()
        first = _rollout(env, [0, 1, 1, 0])
        _obs, info = env.restore_saved(saved["id"])
        assert 0 < info["restore_s"] < 10  # the environment server's own time to load it
        second = _rollout(env, [0, 1, 1, 0])
        for a, b in zip(first, second):
            np.testing.assert_array_equal(a[0], b[0])
        one = httpx.get(f"{url}/v0/snapshots/{saved['id']}").json()
        assert one["session_id"] == env.session_id and one["size_bytes"] > 0
        rest = httpx.post(f"{url}/v0/sessions/{env.session_id}/restore-saved", json={"id": saved["id"]}, timeout=60)
        assert rest.status_code == 200, rest.text
        assert 0 < rest.json()["restore_s"] < 10  # through the env host and the gateway

    with platform_sdk.connect("pendulum", url=url) as other:
        other.reset(seed=0)
        with pytest.raises(platform_sdk.PlatformError, match="cartpole"):
            other.restore_saved(saved["id"])
    with platform_sdk.connect("cartpole", url=url, kwargs={"sutton_barto_reward": True}) as other_args:
        other_args.reset(seed=0)
        with pytest.raises(platform_sdk.PlatformError, match="sutton_barto_reward"):
            other_args.restore_saved(saved["id"])

    assert httpx.get(f"{url}/v0/snapshots/snap-000000000000").status_code == 404
    assert httpx.get(f"{url}/v0/snapshots/..%2Fetc").status_code in (404, 422)
    with pytest.raises(platform_sdk.SessionNotFoundError):
        platform_sdk.resume("snap-000000000000", url=url)
