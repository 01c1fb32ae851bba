"""A recorded session becomes a recording: meta.json and one .npz per episode."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import numpy as np
import platform_sdk
from platform_testing.waiting import wait_for


def test_recorded_session_writes_every_step_once(platform_stack):
    rng = np.random.default_rng(5)
    actions, rewards, observations = [], [], []
    with platform_sdk.connect("cartpole", url=platform_stack.url, record=True) as env:
        sid = env.session_id
        for episode in range(2):
            obs, _ = env.reset(seed=episode)
            observations.append([obs])
            actions.append([])
            rewards.append([])
            while True:
                a = int(rng.integers(0, 2))
                obs, r, term, trunc, _ = env.step(a)
                actions[-1].append(a)
                rewards[-1].append(r)
                observations[-1].append(obs)
                if term or trunc:
                    break
        env.reset(seed=9)
        for _ in range(5):  # a third, unfinished episode: kept when the session closes
            env.step(0)

    folder = Path(platform_stack.recordings) / sid

    def closed_meta():
        path = folder / "meta.json"
        if not path.exists():
            return None
        meta = json.loads(path.read_text())
        return meta if meta.get("status") == "closed" and len(meta["episodes"]) == 3 else None

    meta = wait_for(closed_meta, what=f"recording {folder} to be closed with 3 episodes")
    assert meta["env_id"] == "cartpole"
    for episode in range(2):
        data = np.load(folder / meta["episodes"][episode]["file"])
        assert data["actions"].tolist() == actions[episode]
        assert data["rewards"].tolist() == rewards[episode]
        assert np.array_equal(data["observations"], np.array(observations[episode]))
        assert data["terminated"][-1] or data["truncated"][-1]
    third = np.load(folder / meta["episodes"][2]["file"])
    assert len(third["actions"]) == 5
    seqs = np.concatenate([np.load(folder / e["file"])["seq"] for e in meta["episodes"]])
    assert len(seqs) == len(set(seqs.tolist())), "no step twice"

    listing = httpx.get(f"{platform_stack.url}/v0/recordings", params={"session_id": sid}).json()
    assert any(r["session_id"] == sid for r in listing["data"])
    one = httpx.get(f"{platform_stack.url}/v0/recordings/{sid}")
    assert one.status_code == 200 and one.json()["env_id"] == "cartpole"
    assert httpx.get(f"{platform_stack.url}/v0/recordings/no-such-recording").status_code == 404
