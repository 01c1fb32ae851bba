"""`env.hold(action, n)`: one action for n steps in one round trip, from the SDK and REST."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import numpy as np
import platform_sdk
import pytest
import simplejpeg
from platform_testing.waiting import wait_for


def test_hold_returns_rewards_frames_and_the_last_observation(platform_stack):
    with platform_sdk.connect("cartpole", url=platform_stack.url) as env, \
            platform_sdk.connect("cartpole", url=platform_stack.url) as twin:
        env.reset(seed=4)
        twin.reset(seed=4)
        held = env.hold(1, 8)
        assert held.steps == 8 and held.rewards.tolist() == [1.0] * 8
        assert len(held.frames) == 8
        assert {simplejpeg.decode_jpeg(f).shape for f in held.frames} == {(400, 600, 3)}
        for _ in range(8):
            obs, *_ = twin.step(1)
        np.testing.assert_array_equal(held.observation, obs), "a hold is the same as single steps"
        assert not held.terminated and not held.truncated


def test_hold_stops_when_the_episode_ends(platform_stack):
    with platform_sdk.connect("cartpole", url=platform_stack.url) as env:
        env.reset(seed=0)
        held = env.hold(0, 200, frames=False)
        assert 1 <= held.steps < 200 and held.terminated
        assert len(held.rewards) == held.steps and held.frames == []


def test_a_hold_of_ten_thousand_steps_without_frames(platform_stack):
    with platform_sdk.connect("cartpole", url=platform_stack.url, kwargs={"endless": True}) as env:
        env.reset(seed=0)
        held = env.hold(0, 10_000, frames=False)
        assert held.steps == 10_000, "an endless session restarts in place and the hold goes on"
        assert len(held.rewards) == 10_000 and not held.terminated and not held.truncated


def test_hold_limits_are_clear_errors(platform_stack):
    with platform_sdk.connect("cartpole", url=platform_stack.url) as env:
        env.reset(seed=0)
        with pytest.raises(platform_sdk.InvalidRequestError, match="at most 10,000 steps"):
            env.hold(0, 10_001, frames=False)
        with pytest.raises(platform_sdk.InvalidRequestError, match="frames for at most 256 steps"):
            env.hold(0, 257)
        url = f"{platform_stack.url}/v0/sessions/{env.session_id}/hold"
        too_long = httpx.post(url, json={"action": 0, "steps": 300, "frames": True})
        assert too_long.status_code == 422 and "at most 256" in too_long.json()["detail"]
        assert httpx.post(url, json={"action": 0, "steps": 20_000, "frames": False}).status_code == 422
        ok = httpx.post(url, json={"action": 1, "steps": 3, "frames": False})
        assert ok.status_code == 200 and ok.json()["steps"] == 3 and ok.json()["rewards"] == [1.0, 1.0, 1.0]


def test_a_pending_hold_lets_the_agent_think(platform_stack):
    with platform_sdk.connect("cartpole", url=platform_stack.url) as env:
        env.reset(seed=1)
        pending = env.hold(1, 5, frames=False, wait=False)
        assert isinstance(pending, platform_sdk.PendingHold)
        with pytest.raises(platform_sdk.SessionBusyError, match="a hold of 5 steps is still running"):
            env.step(0)
        held = pending.result()
        assert held.steps == 5 and pending.result() is held
        env.step(0)  # the session takes requests again


def test_a_recorded_hold_records_every_step_with_agent_data_on_the_first(platform_stack):
    with platform_sdk.connect("cartpole", url=platform_stack.url, record=True) as env:
        sid = env.session_id
        env.reset(seed=2)
        env.hold(1, 6, frames=False, agent={"confidence": 0.5, "compute_s": 0.01})
        env.step(0, agent={"confidence": 0.9})
    folder = Path(platform_stack.recordings) / sid

    def closed_meta():
        path = folder / "meta.json"
        meta = json.loads(path.read_text()) if path.exists() else {}
        return meta if meta.get("status") == "closed" and meta.get("episodes") else None

    meta = wait_for(closed_meta, what=f"recording {folder} to be closed")
    data = np.load(folder / meta["episodes"][0]["file"])
    assert data["actions"].tolist() == [1] * 6 + [0]
    confidence = data["agent.confidence"]
    assert confidence[0] == 0.5 and np.isnan(confidence[1:6]).all() and confidence[6] == 0.9
    assert {"confidence", "compute_s"} <= set(meta["agent_keys"])
