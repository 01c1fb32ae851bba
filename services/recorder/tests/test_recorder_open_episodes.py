"""A recording in progress read as written so far: the episode it is recording (only a part file
of raw step events) in the listing, in `get`, and served as an episode (arrays, frames, digests),
from a folder storage and from S3 (its part files in the writer's spool), through the store and
through the service on NATS. Reading never changes a part file, tolerates a torn last record, and
builds a long open episode again only when it grew, at most once a `REBUILD_AFTER_S`."""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from platform_contracts import subjects
from platform_recorder.errors import RecordingNotFoundError
from platform_recorder.reading.open_parts import REBUILD_AFTER_S, OpenParts
from platform_recorder.reading.recording_store import RecordingStore
from platform_recorder.writing.part_files import encode_record
from platform_recorder.writing.writer import RecordingWriter
from recorder_testkit import (
    ask,
    closed,
    episode_events,
    publish,
    reset_event,
    started,
    step_event,
    subject_of,
    summaries,
    wait_drained,
)

JPEG = b"\xff\xd8 a frame \xff\xd9"


def msgs(*events: Any) -> list[tuple[str, bytes]]:
    return [(subject_of(e), e.SerializeToString()) for e in events]


def open_steps(sid: str, first_seq: int, episode: int, steps: int, first_step: int = 1) -> list[Any]:
    """Steps that do not end their episode, each with a frame (rewards: their episode step)."""
    return [
        step_event(sid, first_seq + i, episode, first_step + i, reward=float(first_step + i),
                   frame=JPEG + bytes([first_step + i]))
        for i in range(steps)
    ]


def record_one_and_a_half(writer: RecordingWriter, sid: str = "s1") -> None:
    """A finished episode 0 (3 steps, seq 1..4), then episode 1 started (seq 5) with 4 steps
    (seq 6..9) that have not ended it."""
    writer.process(msgs(started(sid), *episode_events(sid, 1, 0, 3), reset_event(sid, 5, 1, frame=JPEG),
                        *open_steps(sid, 6, 1, 4)))


def digest(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


def test_folder_storage_lists_gets_and_serves_the_open_episode(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    record_one_and_a_half(writer)
    part = tmp_path / "s1" / "episode-000001.part"
    before = digest(part)
    store = RecordingStore(tmp_path)

    [summary] = summaries(store)
    assert (summary["episode_count"], summary["step_count"], summary["total_return"]) == (1, 3, 6.0)
    assert summary["open_episode"] == {"index": 1, "length": 4, "return": 10.0, "first_seq": 5, "last_seq": 9}
    assert store.get("s1").open_episode.length == 4

    reply = store.episode("s1", 1, arrays=["rewards", "observations", "actions", "seq"], frames=[0, 4])
    assert reply.in_progress and reply.episode.index == 1 and reply.episode.length == 4
    assert not reply.episode.HasField("terminated") or not reply.episode.terminated
    rewards = np.frombuffer(reply.arrays["rewards"].data, dtype=reply.arrays["rewards"].dtype)
    assert rewards.tolist() == [1.0, 2.0, 3.0, 4.0]
    assert list(reply.arrays["observations"].shape) == [5, 4]  # the reset's row, then each step's
    assert np.frombuffer(reply.arrays["seq"].data, dtype=reply.arrays["seq"].dtype).tolist() == [6, 7, 8, 9]
    assert reply.frame_count == 5 and reply.frames[0] == JPEG and reply.frames[4] == JPEG + bytes([4])
    assert len(store.episode_digests("s1", 1)) == 5
    assert not store.episode("s1", 0).in_progress  # the finished one: its .npz

    assert digest(part) == before  # reading wrote nothing to the writer's part file
    writer.process(msgs(step_event("s1", 10, 1, 5, reward=5.0, terminated=True)))
    [summary] = summaries(store)
    assert (summary["episode_count"], summary["step_count"]) == (2, 8) and summary["open_episode"] is None
    finished = store.episode("s1", 1, arrays=["rewards"])
    assert not finished.in_progress and finished.episode.length == 5 and finished.episode.terminated


def test_an_episode_neither_finished_nor_open_is_not_found(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    record_one_and_a_half(writer)
    store = RecordingStore(tmp_path)
    with pytest.raises(RecordingNotFoundError, match="no finished episode 2 .* none in progress by that index"):
        store.episode("s1", 2)
    with pytest.raises(RecordingNotFoundError, match=r"in progress\) has frames 0..4"):
        store.episode("s1", 1, frames=[5])


def test_a_torn_last_record_waits_until_whole_and_is_never_cut(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    record_one_and_a_half(writer)
    part = tmp_path / "s1" / "episode-000001.part"
    store = RecordingStore(tmp_path)
    ticks = itertools.count(0.0, REBUILD_AFTER_S)
    store.open_parts = OpenParts(tmp_path, clock=lambda: next(ticks))  # each request may build again
    record = encode_record(step_event("s1", 10, 1, 5, reward=5.0, frame=JPEG))
    with part.open("ab") as f:  # the writer's append, caught half way
        f.write(record[: len(record) // 2])
    torn = part.read_bytes()

    assert summaries(store)[0]["open_episode"]["length"] == 4
    assert store.episode("s1", 1).episode.length == 4
    assert part.read_bytes() == torn  # not repaired: the writer owns the file

    with part.open("ab") as f:  # the rest of the append
        f.write(record[len(record) // 2 :])
    assert summaries(store)[0]["open_episode"] == {"index": 1, "length": 5, "return": 15.0, "first_seq": 5,
                                                   "last_seq": 10}
    assert store.episode("s1", 1, frames=[5]).frames[5] == JPEG


def test_a_growing_open_episode_is_built_again_only_when_it_grew_and_not_too_often(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    record_one_and_a_half(writer)
    store = RecordingStore(tmp_path)
    now = [100.0]
    store.open_parts = parts = OpenParts(tmp_path, clock=lambda: now[0])

    assert store.episode("s1", 1).episode.length == 4 and parts.builds == 1
    now[0] += REBUILD_AFTER_S
    assert store.episode("s1", 1).episode.length == 4 and parts.builds == 1  # unchanged: the build kept

    writer.process(msgs(*open_steps("s1", 10, 1, 3, first_step=5)))
    assert store.episode("s1", 1).episode.length == 4 and parts.builds == 1  # built under a second ago
    assert summaries(store)[0]["open_episode"]["length"] == 7  # the listing counts at once
    now[0] += REBUILD_AFTER_S
    reply = store.episode("s1", 1, arrays=["rewards"], frames=[7])
    assert reply.episode.length == 7 and parts.builds == 2 and reply.frames[7] == JPEG + bytes([7])
    assert np.frombuffer(reply.arrays["rewards"].data, "<f8").tolist() == [1, 2, 3, 4, 5, 6, 7]


def test_a_closed_recording_has_no_open_episode(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    record_one_and_a_half(writer)
    writer.process(msgs(closed("s1", last_seq=9)))
    [summary] = summaries(RecordingStore(tmp_path))
    assert summary["status"] == "closed" and summary["open_episode"] is None
    assert summary["episode_count"] == 2 and summary["step_count"] == 7  # the open one finished at the close


def test_s3_open_episode_is_read_from_the_writer_spool(s3_storage: Any, tmp_path: Path) -> None:
    writer = RecordingWriter(s3_storage, spool=tmp_path / "spool")
    record_one_and_a_half(writer)
    part = tmp_path / "spool" / "s1" / "episode-000001.part"
    before = digest(part)

    store = RecordingStore(s3_storage, parts_root=writer.parts_root)
    [summary] = summaries(store)
    assert (summary["episode_count"], summary["step_count"]) == (1, 3)
    assert summary["open_episode"]["length"] == 4
    reply = store.episode("s1", 1, arrays=["rewards"], frames=[2])
    assert reply.in_progress and reply.frames[2] == JPEG + bytes([2])
    assert digest(part) == before

    assert summaries(RecordingStore(s3_storage))[0]["open_episode"] is None  # no spool: none served


async def test_the_service_serves_the_open_episode_on_nats(recorder_service: Any, recorder_js: tuple[Any, Any]) -> None:
    nc, js = recorder_js
    for msg in (started("s1"), *episode_events("s1", 1, 0, 2), reset_event("s1", 4, 1, frame=JPEG),
                *open_steps("s1", 5, 1, 3)):
        await publish(js, msg)
    await wait_drained(js)

    async def listed() -> dict[str, Any]:
        return (await ask(nc, subjects.RECORDER_LIST_RECORDINGS, {}))["recordings"][0]

    found: dict[str, Any] = {}

    async def has_open() -> bool:
        found.update(await listed())
        return bool((found.get("open_episode") or {}).get("length") == 3 and found["step_count"] == 2)

    await wait_for_async(has_open)
    assert found["open_episode"]["index"] == 1 and found["step_count"] == 2
    got = await ask(nc, subjects.RECORDER_GET_RECORDING, {"id": "s1"})
    assert got["recording"]["open_episode"]["length"] == 3
    episode = await ask(nc, subjects.RECORDER_EPISODE, {"id": "s1", "episode": 1, "frames": [3]})
    assert episode["in_progress"] is True and episode["frame_count"] == 4 and episode["episode"]["length"] == 3


async def wait_for_async(predicate: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not await predicate():
        assert time.monotonic() < deadline, "the open episode was never listed"
        await asyncio.sleep(0.1)
