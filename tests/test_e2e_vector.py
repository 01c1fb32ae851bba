"""`make_vec`: a vector session as a Gymnasium VectorEnv, one round trip per step."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import platform_sdk
import pytest
from gymnasium.vector import AutoresetMode
from platform_testing.waiting import wait_for


def test_make_vec_matches_sync_vector_env_step_for_step(platform_stack):
    num_envs = 6
    local = gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1") for _ in range(num_envs)])
    rng = np.random.default_rng(0)
    with platform_sdk.make_vec("cartpole", num_envs, url=platform_stack.url) as envs:
        assert envs.observation_space == local.observation_space and envs.action_space == local.action_space
        assert envs.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
        obs, _ = envs.reset(seed=7)
        expected, _ = local.reset(seed=7)
        np.testing.assert_array_equal(obs, expected)
        ended = 0
        for _ in range(120):
            actions = rng.integers(0, 2, num_envs)
            got = envs.step(actions)
            want = local.step(actions)
            for a, b in zip(got[:4], want[:4]):
                np.testing.assert_array_equal(a, b)
            ended += int(np.logical_or(got[2], got[3]).sum())
        assert ended > 0, "episodes ended and were reset on the next step, as SyncVectorEnv does"


def test_same_step_autoreset_and_snapshots(platform_stack):
    with platform_sdk.make_vec("cartpole", 4, url=platform_stack.url, autoreset_mode="SameStep") as envs:
        envs.reset(seed=1)
        handles = envs.snapshot()
        first = [envs.step(np.zeros(4, dtype=np.int64)) for _ in range(20)]
        _observations, infos = envs.restore(handles)
        assert infos["restore_s"].shape == (4,) and (infos["restore_s"] > 0).all()  # each sub-environment's
        second = [envs.step(np.zeros(4, dtype=np.int64)) for _ in range(20)]
        for a, b in zip(first, second):
            np.testing.assert_array_equal(a[0], b[0])
        finals = [info for *_, info in first if "final_obs" in info]
        assert finals, "always pushing left ends episodes within 20 steps"
        assert np.all(np.abs(first[-1][0]) < 3)


def _first_episode(folder: Path, steps: int):
    """A sub-recording's meta.json and its first episode's arrays, once that episode has `steps` steps."""

    def written():
        path = folder / "meta.json"
        meta = json.loads(path.read_text()) if path.exists() else {}
        return meta if meta.get("episodes") and meta["episodes"][0].get("length") == steps else None

    meta = wait_for(written, what=f"recording {folder} with {steps} steps")
    return meta, np.load(folder / meta["episodes"][0]["file"])


def test_every_sub_environment_is_recorded(platform_stack):
    with platform_sdk.make_vec("cartpole", 3, url=platform_stack.url, record=True) as envs:
        sid = envs.session_id
        envs.reset(seed=0)
        for _ in range(5):
            envs.step(np.ones(3, dtype=np.int64))
    for i in range(3):
        meta, data = _first_episode(Path(platform_stack.recordings) / f"{sid}-{i}", steps=5)
        assert meta["env_id"] == "cartpole"
        assert data["actions"].tolist() == [1] * 5


def test_make_vec_records_frames_and_refuses_a_life_as_connect_would(platform_stack):
    """make_vec takes connect's options: record_frames keeps each sub-environment's frames; a
    life is refused by the platform (a life records one environment), naming why."""
    with platform_sdk.make_vec("cartpole", 2, url=platform_stack.url, record=True, record_frames=True) as envs:
        sid = envs.session_id
        envs.reset(seed=1)
        for _ in range(3):
            envs.step(np.zeros(2, dtype=np.int64))
    for i in range(2):
        _meta, data = _first_episode(Path(platform_stack.recordings) / f"{sid}-{i}", steps=3)
        frames = data["frames"]
        assert len(frames) == 4 and all(bytes(frame).startswith(b"\xff\xd8") for frame in frames)  # JPEGs
    with pytest.raises(platform_sdk.InvalidRequestError, match="a vector session .* cannot append to it"):
        platform_sdk.make_vec("cartpole", 2, url=platform_stack.url, record=True, life="vec-life")
