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
from platform_testing.nats_server import NatsServer
from platform_recorder.episode_lists import LIST_SIZE
from platform_recorder.layout import episode_list_name
from platform_recorder.meta import RecordingMeta
from recorder_testkit import (
    RecorderProcess,
    closed,
    consumer_drained,
    dict_obs,
    dict_spec,
    episode_events,
    load_episode,
    publish,
    read_meta,
    delivered_total,
    started,
    wait_drained,
    wait_for,
)

KILLS = 5


async def _delivered(js: Any) -> int:
    return await delivered_total(js)


@pytest.mark.timeout(240)
@pytest.mark.parametrize(("episodes", "steps"), [(20, 200), (700, 5)], ids=["long-episodes", "episode-lists"])
async def test_sigkill_and_restart_lose_and_duplicate_nothing(
    recorder_nats: NatsServer, recorder_js: tuple[Any, Any], tmp_path: Path, unique_prefix: str, episodes: int,
    steps: int,
) -> None:
    """Killed at random moments; with 700 short episodes its first entries go to sealed episode
    lists (episode_lists.LIST_SIZE) as it is killed."""
    _, js = recorder_js
    root = tmp_path / "recordings"
    log_path = tmp_path / "recorder.log"
    recorder = RecorderProcess(recorder_nats.url, root, log_path, PLATFORM_RECORDER_BATCH="64").start()
    sid, other = f"{unique_prefix}-crash", f"{unique_prefix}-other"
    events: list[Any] = []
    for episode in range(episodes):
        events += episode_events(sid, len(events) + 1, episode, steps, agent={"value": float(episode)})
    total = len(events)
    # a second recorded session (Dict observations) and an unrecorded one, interleaved
    others = [e for ep in range(10) for e in episode_events(other, 1 + ep * 21, ep, 20, obs=dict_obs)]
    noise = episode_events(f"{unique_prefix}-norec", 1, 0, 50)
    rng = random.Random(7)
    kills = 0

    async def publisher() -> None:
        await publish(js, started(sid))
        await publish(js, started(other, spec=dict_spec()))
        await publish(js, started(f"{unique_prefix}-norec", record=False))
        for n, i in enumerate(range(0, total, 40)):
            while i >= total * 0.8 and kills < KILLS:  # keep streaming until the recorder died often
                await asyncio.sleep(0.05)
            for event in [*events[i : i + 40], *others[n * 2 : n * 2 + 2], *noise[n : n + 1]]:
                await publish(js, event)
            await asyncio.sleep(0.08)
        for event in [*others[n * 2 + 2 :], *noise[n + 1 :]]:
            await publish(js, event)
        await publish(js, closed(sid, last_seq=total))
        await publish(js, closed(other, last_seq=len(others), env_id="DictNav-v0"))

    publishing = asyncio.create_task(publisher())
    try:
        while kills < KILLS or not publishing.done():
            # wait until this run of the recorder consumes (or has nothing to), then kill it at a random moment
            before = await _delivered(js)
            deadline = time.monotonic() + 30
            while await _delivered(js) == before and not await consumer_drained(js):
                assert time.monotonic() < deadline, log_path.read_text()[-3000:]
                assert recorder.process.poll() is None, log_path.read_text()[-3000:]
                await asyncio.sleep(0.02)
            await asyncio.sleep(rng.uniform(0.0, 0.4))
            recorder.kill()
            kills += 1
            recorder.start()
        await publishing
        await wait_for(
            recorder.ready,
            timeout=30,
            what="the last restart of the recorder",
        )
        for session in (sid, other):
            await wait_for(
                lambda s=session: (m := _meta(root, s)) and m.status == "closed",
                timeout=60,
                what=f"recording {session} closed",
            )
        await wait_drained(js, timeout=30)
    finally:
        publishing.cancel()
        returncode = recorder.stop()
    log = log_path.read_text()
    assert returncode == 0, log[-3000:]  # SIGTERM: a clean stop
    assert kills >= KILLS
    assert "unacked messages: resuming" in log  # at least one kill hit a batch in flight
    assert "GAP" not in log and "Traceback" not in log, log[-3000:]
    meta = read_meta(root, sid)
    assert meta.last_seq == total and meta.missing_seqs == [] and meta.orphan_seqs == []
    assert [e["length"] for e in meta.episodes] == [steps] * episodes
    seqs: list[int] = []
    for entry in meta.episodes:
        data = load_episode(root, sid, entry["index"])
        assert data["observations"][:, 0].tolist() == list(range(entry["first_seq"], entry["last_seq"] + 1))
        assert (data["agent.value"] == entry["index"]).all() and data["terminated"][-1]
        seqs += [entry["first_seq"], *data["seq"].tolist()]
    assert seqs == list(range(1, total + 1))  # every seq exactly once, in order
    lists = [episode_list_name(n) for n in range(episodes // LIST_SIZE)]
    assert sorted(p.name for p in (root / sid).iterdir() if p.suffix != ".npz") == sorted(
        ["meta.json", "recording.json", *lists])
    assert len(list((root / sid).glob("*.npz"))) == episodes
    meta = read_meta(root, other)
    assert [e["length"] for e in meta.episodes] == [20] * 10 and meta.last_seq == len(others)
    positions = [load_episode(root, other, i)["observations.position"][:, 0] for i in range(10)]
    assert [int(x) for p in positions for x in p] == list(range(1, len(others) + 1))
    # the recordings, and the recorders' partition lock files (platform_recorder.writing.partition_locks)
    assert sorted(p.name for p in root.iterdir()) == sorted([".partition-locks", sid, other])


def _meta(root: Path, sid: str) -> RecordingMeta | None:
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
