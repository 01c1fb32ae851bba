"""How episodes end: Gymnasium semantics, auto-reset (the agent loop), endless sessions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import platform_sdk
from platform_testing.waiting import wait_for


def test_without_auto_reset_gymnasium_semantics_hold(platform_stack):
    with platform_sdk.connect("cartpole", url=platform_stack.url) as env:
        env.reset(seed=0)
        for _ in range(200):
            obs, _r, terminated, _truncated, info = env.step(0)
            if terminated:
                break
        assert terminated and "final_obs" not in info
        assert abs(obs[2]) > 0.2, "the pole fell: the observation is the last one of the episode"


def test_auto_reset_returns_the_next_episodes_first_observation(platform_stack):
    with platform_sdk.connect("cartpole", url=platform_stack.url, auto_reset=True, record=True) as env:
        sid = env.session_id
        env.reset(seed=0)
        for steps in range(1, 200):
            obs, _r, terminated, truncated, info = env.step(0)
            if terminated:
                break
        assert terminated and not truncated
        assert abs(info["final_obs"][2]) > 0.2, "final_obs is where the pole fell"
        assert np.all(np.abs(obs) <= 0.05), "the observation is a new start (CartPole starts within 0.05)"
        assert "final_info" in info
        env.step(1)
    folder = Path(platform_stack.recordings) / sid

    def two_episodes():
        path = folder / "meta.json"
        meta = json.loads(path.read_text()) if path.exists() else {}
        return meta if meta.get("status") == "closed" and len(meta.get("episodes", [])) == 2 else None

    meta = wait_for(two_episodes, what="the auto-reset recording closed with 2 episodes")
    first = np.load(folder / meta["episodes"][0]["file"])
    assert len(first["actions"]) == steps and first["terminated"][-1]
    np.testing.assert_allclose(first["observations"][-1], info["final_obs"])
    second = np.load(folder / meta["episodes"][1]["file"])
    np.testing.assert_allclose(second["observations"][0], obs)


def test_endless_sessions_restart_in_place_and_have_no_time_limit(platform_stack):
    with platform_sdk.connect("cartpole", url=platform_stack.url, kwargs={"endless": True}) as env:
        assert env.endless
        env.reset(seed=0)
        restarts = 0
        for _ in range(600):  # past CartPole-v1's 500-step limit
            obs, _r, terminated, truncated, info = env.step(0)
            assert not terminated and not truncated
            if info.get("restarted"):
                restarts += 1
                assert "final_info" in info and abs(info["final_obs"][2]) > 0.2
                assert np.all(np.abs(obs) <= 0.05)
        assert restarts > 10, "always pushing left, the pole falls every few steps"


def test_an_endless_balanced_pole_runs_past_the_time_limit(platform_stack):
    with platform_sdk.connect("cartpole", url=platform_stack.url, kwargs={"endless": True}) as env:
        obs, _ = env.reset(seed=1)
        for _ in range(700):  # push towards the pole's lean: balances seed 1 for 2,000+ steps in-process
            obs, _r, terminated, truncated, info = env.step(int(obs[2] + 0.5 * obs[3] > 0))
            assert not truncated and not terminated
            assert not info.get("restarted"), "a balanced pole is not restarted"


def test_an_endless_recording_is_files_of_1000_steps_with_its_restarts_inside(platform_stack):
    """Issue 29: a restart in place stays in its file (marked `restarted`, its final observation in
    `final_observations`); only the step count cuts files."""
    seen, restarted, finals = [], [], []
    with platform_sdk.connect("cartpole", url=platform_stack.url, kwargs={"endless": True}, record=True) as env:
        sid = env.session_id
        obs, _ = env.reset(seed=0)
        first = obs
        for _ in range(3500):  # always pushing left: the pole falls every few steps
            obs, _r, terminated, truncated, info = env.step(0)
            assert not terminated and not truncated
            seen.append(obs)
            restarted.append(bool(info.get("restarted")))
            if info.get("restarted"):
                finals.append(info["final_obs"])
    assert sum(restarted) > 100
    folder = Path(platform_stack.recordings) / sid

    def closed():
        path = folder / "meta.json"
        meta = json.loads(path.read_text()) if path.exists() else {}
        return meta if meta.get("status") == "closed" and sum(e["length"] for e in meta.get("episodes", [])) == 3500 \
            else None

    meta = wait_for(closed, what="the endless recording closed with its 3,500 steps")
    entries = meta["episodes"]
    assert [e["length"] for e in entries] == [1000, 1000, 1000, 500]  # not a file per restart
    assert sum(e["restarts"] for e in entries) == sum(restarted)
    files = [np.load(folder / e["file"]) for e in entries]
    assert [e["start"] for e in entries][0] == "reset"
    np.testing.assert_allclose(files[0]["observations"][0], first)
    rows = np.concatenate([f["observations"][1:] if e["start"] == "reset" else f["observations"]
                           for f, e in zip(files, entries)])
    np.testing.assert_allclose(rows, np.array(seen))  # row t+1: what the agent saw after step t (a new start after a restart)
    assert np.concatenate([f["restarted"] for f in files]).tolist() == restarted
    assert not any(f["terminated"].any() or f["truncated"].any() for f in files)
    np.testing.assert_allclose(np.concatenate([f["final_observations"] for f in files]), np.array(finals))
    seqs = np.concatenate([f["seq"] for f in files]).astype(int)
    assert len(seqs) == 3500 and np.all(np.diff(seqs) > 0)  # every step once, in order
    assert [e["episode"] for e in entries][0] == 0 and entries[1]["episode"] == entries[0]["restarts"]
