"""Crash safety: the recorder as a real process, SIGKILLed and restarted while a long stream
flows in; every seq must end up in the episode files exactly once and in order."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from platform_contracts import subjects
from platform_recorder.reading import load_episode, read_meta
from platform_testing.nats_server import NatsServer
from recorder_testkit import RecorderProcess, closed, episode_events, publish, started, wait_drained, wait_for

EPISODES, STEPS = 20, 200
KILLS = 5


async def _delivered(js: Any) -> int:
    try:
        info = await js.consumer_info(subjects.SESSIONS_STREAM, subjects.RECORDER_CONSUMER)
    except Exception:  # noqa: BLE001 - not created yet
        return 0
    return info.delivered.stream_seq if info.delivered else 0


@pytest.mark.timeout(240)
async def test_sigkill_and_restart_lose_and_duplicate_nothing(
    recorder_nats: NatsServer, recorder_js: tuple[Any, Any], tmp_path: Path, unique_prefix: str
) -> None:
    _, js = recorder_js
    root = tmp_path / "recordings"
    log_path = tmp_path / "recorder.log"
    recorder = RecorderProcess(recorder_nats.url, root, log_path, PLATFORM_RECORDER_BATCH="64").start()
    sid = f"{unique_prefix}-crash"
    events = []
    for episode in range(EPISODES):
        events += episode_events(sid, len(events) + 1, episode, STEPS, agent={"value": float(episode)})
    total = len(events)
    rng = random.Random(7)

    async def publisher() -> None:
        await publish(js, started(sid))
        for i in range(0, total, 40):
            for event in events[i : i + 40]:
                await publish(js, event)
            await asyncio.sleep(0.08)
        await publish(js, closed(sid, last_seq=total))

    publishing = asyncio.create_task(publisher())
    kills = 0
    try:
        while kills < KILLS or not publishing.done():
            # wait until this run of the recorder is consuming, then kill it at a random moment
            before = await _delivered(js)
            deadline = time.monotonic() + 30
            while await _delivered(js) == before and not (publishing.done() and kills >= KILLS):
                assert time.monotonic() < deadline, log_path.read_text()[-3000:]
                assert recorder.process.poll() is None, log_path.read_text()[-3000:]
                await asyncio.sleep(0.02)
            await asyncio.sleep(rng.uniform(0.0, 0.4))
            recorder.kill()
            kills += 1
            recorder.start()
        await publishing
        meta = await wait_for(
            lambda: (m := _meta(root, sid)) and m["status"] == "closed" and m,
            timeout=60,
            what="the recording closed",
        )
        await wait_drained(js, timeout=30)
    finally:
        publishing.cancel()
        assert recorder.stop() in (0, None), log_path.read_text()[-3000:]
    log = log_path.read_text()
    assert kills >= KILLS
    assert "GAP" not in log and "Traceback" not in log, log[-3000:]
    assert meta["last_seq"] == total and meta["missing_seqs"] == [] and meta["orphan_seqs"] == []
    assert [e["length"] for e in meta["episodes"]] == [STEPS] * EPISODES
    seqs: list[int] = []
    for entry in meta["episodes"]:
        data = load_episode(root, sid, entry["index"])
        assert data["observations"][:, 0].tolist() == list(range(entry["first_seq"], entry["last_seq"] + 1))
        assert (data["agent.value"] == entry["index"]).all() and data["terminated"][-1]
        seqs += [entry["first_seq"], *data["seq"].tolist()]
    assert seqs == list(range(1, total + 1))  # every seq exactly once, in order
    assert sorted(p.suffix for p in (root / sid).iterdir()) == [".json"] + [".npz"] * EPISODES


def _meta(root: Path, sid: str) -> dict[str, Any] | None:
    try:
        return read_meta(root, sid)
    except Exception:  # noqa: BLE001 - not there yet, or being replaced
        return None


def test_unreachable_nats_exits_nonzero_with_one_line(tmp_path: Path) -> None:
    from platform_testing.ports import free_port

    env = {"PLATFORM_NATS_URL": f"nats://127.0.0.1:{free_port()}", "PLATFORM_RECORDINGS": str(tmp_path / "r")}
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "platform_recorder"],
        check=False,
        env={**_base_env(), **env},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode != 0
    assert time.monotonic() - start < 15
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot connect to NATS" in lines[0], done.stderr


def test_bad_config_exits_nonzero_with_one_line(tmp_path: Path) -> None:
    env = {"PLATFORM_RECORDER_BATCH": "lots", "PLATFORM_RECORDINGS": str(tmp_path / "r")}
    done = subprocess.run(
        [sys.executable, "-m", "platform_recorder"],
        check=False,
        env={**_base_env(), **env},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "PLATFORM_RECORDER_BATCH" in lines[0], done.stderr


def _base_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("PLATFORM_")}
