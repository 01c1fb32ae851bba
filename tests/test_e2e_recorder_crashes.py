"""Crash safety of recordings, with the whole platform: the recorder SIGKILLed at random moments
(at least 10 times) and nats-server SIGKILLed once during a long recorded run leave every step
exactly once, in order; an environment killed mid-episode leaves the steps taken so far
recorded and readable."""

from __future__ import annotations

import json
import os
import random
import signal
import threading
import time
from pathlib import Path

import numpy as np
import platform_sdk
import pytest
from platform_sdk.recordings import EpisodeFolder
from platform_testing.platform import running_platform
from platform_testing.waiting import instance_pids, wait_for

RECORDER_KILLS = 10


def _closed_meta(folder: Path, timeout: float = 120.0) -> dict:
    def check():
        path = folder / "meta.json"
        meta = json.loads(path.read_text()) if path.exists() else {}
        return meta if meta.get("status") in ("closed", "crashed") else None

    return wait_for(check, timeout=timeout, what=f"recording {folder} to be closed")


def _recorded(folder: Path) -> tuple[list[int], list[int]]:
    """Every recorded event seq (each episode's reset, `first_seq`, then its steps' `seq`) and
    every action, episode by episode, in order: of every episode, those in the sealed episode
    lists of a long recording too (read as a user would, with `EpisodeFolder`)."""
    seqs: list[int] = []
    actions: list[int] = []
    for entry in EpisodeFolder(folder).episodes:
        assert entry["file"], f"episode {entry['index']} of {folder.name} was written: {entry}"
        data = np.load(folder / entry["file"])
        seqs += [entry["first_seq"], *data["seq"].tolist()]
        assert seqs[-1] == entry["last_seq"]
        actions += data["actions"].tolist()
    return seqs, actions


def _every_seq_once_in_order(seqs: list[int]) -> str | None:
    """None when `seqs` is 1, 2, ... with nothing missing or repeated; otherwise a short account
    of the first place it goes wrong (a full diff of thousands of numbers takes minutes)."""
    for index, seq in enumerate(seqs):
        if seq != index + 1:
            around = seqs[max(0, index - 3): index + 4]
            repeated = len(seqs) - len(set(seqs))
            missing = len(set(range(1, max(seqs) + 1)) - set(seqs))
            return (f"{len(seqs)} seqs; the first wrong one is at index {index}: {seq} where "
                    f"{index + 1} belongs (around it: {around}); {repeated} repeated, {missing} missing")
    return None


def test_recorder_and_nats_killed_during_a_long_run_lose_and_duplicate_nothing(tmp_path):
    rng = random.Random(7)
    with running_platform(tmp_path / "platform") as stack:
        sent: list[int] = []
        errors: list[BaseException] = []
        stop = threading.Event()

        def drive(env) -> None:
            try:
                env.reset(seed=0)
                while not stop.is_set():
                    action = len(sent) % 2
                    env.step(action)
                    sent.append(action)
            except BaseException as exc:  # noqa: BLE001 - reported by the test below
                errors.append(exc)

        with platform_sdk.connect("cartpole", url=stack.url, record=True, auto_reset=True) as env:
            sid = env.session_id
            driver = threading.Thread(target=drive, args=(env,))
            driver.start()
            try:
                for kill in range(RECORDER_KILLS):
                    time.sleep(rng.uniform(0.2, 1.0))
                    stack.restart("recorder", signal.SIGKILL, wait_ready=False)
                    if kill == RECORDER_KILLS // 2:
                        time.sleep(rng.uniform(0.1, 0.5))
                        stack.restart("nats", signal.SIGKILL)
                time.sleep(1.0)
            finally:
                stop.set()
                driver.join(timeout=60)
            assert not errors, f"stepping failed: {errors[0]!r}"
        assert len(sent) > 500, f"the run was long enough to be killed into: {len(sent)} steps"

        folder = Path(stack.recordings) / sid
        meta = _closed_meta(folder)
        seqs, actions = _recorded(folder)
        wrong = _every_seq_once_in_order(seqs)
        assert wrong is None, f"every step exactly once, in order: {wrong}"
        first_wrong = next((i for i, (a, b) in enumerate(zip(actions, sent)) if a != b), None)
        assert len(actions) == len(sent) and first_wrong is None, (
            f"every action the client sent, in order: {len(actions)} recorded of {len(sent)} sent, "
            f"the first differing at {first_wrong}")
        assert meta["last_seq"] == meta["published_last_seq"] == len(seqs)


def test_an_environment_killed_mid_episode_leaves_its_steps_readable(platform_stack):
    with platform_sdk.connect("pendulum", url=platform_stack.url, record=True) as env:
        sid = env.session_id
        env.reset(seed=1)
        for _ in range(37):
            env.step(np.array([0.5], dtype=np.float32))
        for pid in instance_pids(sid):
            os.kill(pid, signal.SIGKILL)
        with pytest.raises(platform_sdk.EnvironmentCrashedError):
            for _ in range(100):
                env.step(np.array([0.5], dtype=np.float32))
                time.sleep(0.05)
    folder = Path(platform_stack.recordings) / sid
    meta = _closed_meta(folder)
    assert meta["status"] == "crashed" and meta["log_tail"]
    seqs, actions = _recorded(folder)
    assert seqs == list(range(1, 39)), "the reset and the 37 steps before the kill"
    assert len(actions) == 37
