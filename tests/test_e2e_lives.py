"""Lives end to end: two sessions recording one after the other under the same life append to
it (each episode's `life_start` counts across the whole life), frames thinned by the life's
settings, read back with `LifeReader`; a life goes on after a crash from a saved snapshot."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import httpx
import platform_sdk
import pytest
from platform_sdk.recordings import EpisodeFolder, LifeReader, ThinnedRecordingError
from platform_testing.waiting import instance_pids, wait_for


def _run(url: str, life: str, steps: int, seed: int) -> str:
    with platform_sdk.connect("cartpole", url=url, record=True, auto_reset=True, life=life,
                              frame_every=4, max_frames=40) as env:
        env.reset(seed=seed)
        for i in range(steps):
            env.step(i % 2)
        return env.session_id


def test_two_sessions_append_to_one_life_with_thinned_frames(platform_stack):
    url, root = platform_stack.url, Path(platform_stack.recordings)
    first = _run(url, "robot-1", 120, seed=0)
    second = _run(url, "robot-1", 80, seed=1)

    def life_done():
        path = root / "lives" / "robot-1.json"
        index = json.loads(path.read_text()) if path.exists() else {}
        sessions = index.get("sessions", [])
        return index if len(sessions) == 2 and index.get("total_steps") == 200 else None

    index = wait_for(life_done, timeout=60, what="the life robot-1 to hold both sessions")
    assert [s["session_id"] for s in index["sessions"]] == [first, second]
    assert index["sessions"][1]["first_step"] == 120

    life = LifeReader(root, "robot-1")
    starts = [episode.life_start for episode in life.episodes()]
    assert starts == sorted(starts) and starts[0] == 0
    assert any(start >= 120 for start in starts), "the second session's episodes continue the count"
    frames = list(life.frames())
    steps = [step for step, _ in frames]
    assert steps == sorted(steps) and len(frames) <= 40
    assert all(step % 4 == 0 for step in steps), "one frame in 4 (frame_every=4) at most"
    assert {frame.shape for _, frame in frames} == {(400, 600, 3)}

    try:
        EpisodeFolder(root / first)
    except ThinnedRecordingError as exc:
        assert "LifeReader" in str(exc)
    else:
        raise AssertionError("a thinned recording must not load with EpisodeFolder")

    listed = httpx.get(f"{url}/v0/recordings", params={"life": "robot-1"}).json()
    assert {r["session_id"] for r in listed["data"]} == {first, second}


def test_a_life_continues_after_a_crash_from_a_saved_snapshot(platform_stack):
    url, root = platform_stack.url, Path(platform_stack.recordings)
    with platform_sdk.connect("cartpole", url=url, record=True, life="robot-2") as env:
        crashed = env.session_id
        env.reset(seed=3)
        for i in range(10):
            env.step(i % 2)
        saved = env.save_snapshot("before the crash")
        for i in range(5):
            env.step(i % 2)
        for pid in instance_pids(crashed):
            os.kill(pid, signal.SIGKILL)
        with pytest.raises(platform_sdk.EnvironmentCrashedError):
            for _ in range(100):
                env.step(0)
                time.sleep(0.05)

    def lock_released():
        state = httpx.get(f"{url}/v0/sessions/{crashed}").json()["state"]
        return state in ("crashed", "closed")

    wait_for(lock_released, what=f"session {crashed} to be marked crashed")
    with platform_sdk.resume(saved["id"], url=url, record=True, life="robot-2") as again:
        resumed = again.session_id
        for i in range(7):
            again.step(i % 2)

    def both_sessions():
        path = root / "lives" / "robot-2.json"
        index = json.loads(path.read_text()) if path.exists() else {}
        sessions = index.get("sessions", [])
        return index if len(sessions) == 2 and all(s.get("status") != "recording" for s in sessions) else None

    index = wait_for(both_sessions, timeout=60, what="the life robot-2 to hold the crashed and the resumed session")
    assert [s["session_id"] for s in index["sessions"]] == [crashed, resumed]
    assert index["sessions"][0]["steps"] == 15, "the crashed session's 15 steps stay in the life"
    assert index["sessions"][1]["first_step"] == 15 and index["total_steps"] == 22
    starts = [episode.life_start for episode in LifeReader(root, "robot-2").episodes()]
    assert starts == [0, 15], "the resumed session's episode starts where the crashed one stopped"
