"""platform_sdk.recordings.EpisodeFolder reads what the real recorder wrote: the arrays equal what
the SDK saw, frames decode, agent data and labelled observations (`state.<name>`) are there."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import platform_sdk
from platform_sdk.recordings import EpisodeFolder
from platform_testing.waiting import wait_for


def _closed(folder: Path, episodes: int) -> EpisodeFolder:
    def check():
        path = folder / "meta.json"
        meta = json.loads(path.read_text()) if path.exists() else {}
        return meta if meta.get("status") == "closed" and len(meta.get("episodes", [])) == episodes else None

    wait_for(check, what=f"recording {folder} to be closed with {episodes} episodes")
    return EpisodeFolder(folder)


def test_cartpole_with_frames_and_agent_data_reads_back_as_the_sdk_saw_it(platform_stack):
    rng = np.random.default_rng(7)
    seen = []  # per episode: observations, actions, rewards, confidences, last frame
    with platform_sdk.connect("cartpole", url=platform_stack.url, record=True, record_frames=True) as env:
        sid = env.session_id
        for episode in range(2):
            obs, _ = env.reset(seed=episode)
            record = {"observations": [obs], "actions": [], "rewards": [], "confidence": []}
            while True:
                action = int(rng.integers(0, 2))
                confidence = float(rng.random())
                step = len(record["actions"])
                agent = {"confidence": confidence} if step % 2 == 0 else None
                obs, reward, terminated, truncated, _ = env.step(action, agent=agent)
                record["observations"].append(obs)
                record["actions"].append(action)
                record["rewards"].append(reward)
                record["confidence"].append(confidence if agent else np.nan)
                if terminated or truncated:
                    break
            record["last_frame"] = env.render()
            seen.append(record)

    folder = _closed(Path(platform_stack.recordings) / sid, episodes=2)
    assert len(folder) == 2 and folder.notes == []
    assert folder.agent_keys == ["confidence"] and folder.meta["env_id"] == "cartpole"
    for record, episode in zip(seen, folder, strict=True):
        steps = len(record["actions"])
        assert episode.length == steps
        assert episode["actions"].tolist() == record["actions"]
        assert episode["rewards"].tolist() == record["rewards"]
        np.testing.assert_array_equal(episode["observations"], np.array(record["observations"]))
        np.testing.assert_array_equal(episode["agent.confidence"], record["confidence"])
        assert episode["terminated"][-1] or episode["truncated"][-1]
        assert episode.frame_count == steps + 1, "the reset's frame and one per step"
        first, last = episode.frames(0), episode.frames(-1)
        assert first.shape == (400, 600, 3) and first.dtype == np.uint8
        # the same state, the same picture: CartPole's recorded frames are painted by the recorder
        # from the observation (platform_contracts.painted_frames), Gymnasium's but for its
        # anti-aliased edges
        assert np.abs(last.astype(int) - record["last_frame"].astype(int)).mean() < 3
    assert [e["index"] for e in folder.episodes] == [0, 1]


def test_dmc_walker_state_columns_are_the_labelled_parts(platform_stack):
    rng = np.random.default_rng(3)
    with platform_sdk.connect("dmc-walker-walk", url=platform_stack.url, record=True) as env:
        sid = env.session_id
        labels = env.get_observation_labels()
        obs, _ = env.reset(seed=1)
        observations = [obs]
        for _ in range(6):
            obs, *_ = env.step(rng.uniform(-1, 1, size=env.action_space.shape))
            observations.append(obs)
        parts = [env.labelled(o) for o in observations]

    folder = _closed(Path(platform_stack.recordings) / sid, episodes=1)
    episode = folder[0]
    assert [name for name, _, _ in labels] == ["height", "orientations", "velocity"]
    for name, start, stop in labels:
        column = episode[f"state.{name}"]
        assert column.dtype == np.float64 and column.shape == (7, stop - start)
        np.testing.assert_array_equal(column, np.array([p[name] for p in parts]))
        np.testing.assert_array_equal(episode[f"observations.{name}"].reshape(7, -1), column)
