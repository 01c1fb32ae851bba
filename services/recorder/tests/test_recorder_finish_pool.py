"""Episodes prepared in the finishing worker process (`writing.finish_pool`): the same files as in
line, listed by a later batch or flush, and nothing lost when the worker dies or a batch fails."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import numpy as np
from platform_recorder.writing.finish_pool import MIN_POOLED, WORKER_NICENESS
from platform_recorder.writing.part_files import part_files
from platform_recorder.writing.writer import RecordingWriter
from recorder_testkit import closed, episode_events, load_episode, read_meta, started, subject_of

EPISODES = MIN_POOLED // 4 + 1  # a batch of episodes of 3 steps that weighs enough to go to the worker


def msgs(*events: Any) -> list[tuple[str, bytes]]:
    return [(subject_of(e), e.SerializeToString()) for e in events]


def episodes(sid: str, first: int, count: int, steps: int = 3) -> list[Any]:
    out: list[Any] = []
    for episode in range(first, first + count):
        out += episode_events(sid, episode * (steps + 1) + 1, episode, steps)
    return out


def record(root: Path, pooled: bool, batches: list[list[Any]], sid: str = "s1") -> RecordingWriter:
    writer = RecordingWriter(root, meta_interval=0.0, finish_pool=pooled)
    writer.process(msgs(started(sid)))
    for batch in batches:
        writer.process(msgs(*batch))
    return writer


def worker_pids(writer: RecordingWriter) -> list[int]:
    executor = writer._finish_pool._executor  # type: ignore[union-attr]
    assert executor is not None, "no finishing worker was started"
    return list(executor._processes)


def test_a_busy_batch_is_prepared_in_the_worker_and_gives_the_files_prepared_in_line(tmp_path: Path) -> None:
    batches = [episodes("s1", 0, EPISODES), episodes("s1", EPISODES, EPISODES)]
    in_line = record(tmp_path / "in-line", False, batches)
    in_line.close()
    pooled = record(tmp_path / "pooled", True, batches)
    assert pooled._finish_pool is not None and pooled._finish_pool.pooled_tasks == 2
    assert worker_pids(pooled) and all(pid != os.getpid() for pid in worker_pids(pooled))
    pooled.process(msgs(closed("s1", last_seq=2 * EPISODES * 4)))  # the close waits for every episode
    # the worker (which has run its tasks by now) yields to the stepping processes
    assert all(os.getpriority(os.PRIO_PROCESS, pid) == os.getpriority(os.PRIO_PROCESS, 0) + WORKER_NICENESS
               for pid in worker_pids(pooled))
    meta, expected = read_meta(tmp_path / "pooled", "s1"), read_meta(tmp_path / "in-line", "s1")
    assert meta is not None and expected is not None and meta.status == "closed"
    assert [e["index"] for e in meta.episodes] == list(range(2 * EPISODES))
    strip = ("written_at", "finished_at")
    assert [{k: v for k, v in e.items() if k not in strip} for e in meta.episodes] == [
        {k: v for k, v in e.items() if k not in strip} for e in expected.episodes
    ]
    for index in (0, EPISODES, 2 * EPISODES - 1):
        got, want = load_episode(tmp_path / "pooled", "s1", index), load_episode(tmp_path / "in-line", "s1", index)
        assert sorted(got) == sorted(want)
        for name in want:
            np.testing.assert_array_equal(got[name], want[name])
    pooled.close()
    assert part_files(tmp_path / "pooled" / "s1") == {}


def test_what_the_worker_prepared_is_listed_by_a_later_flush(tmp_path: Path) -> None:
    writer = record(tmp_path, True, [episodes("s1", 0, EPISODES)])
    recording = writer._sessions["s1"]
    for _ in range(100):  # the idle loop's flushes, as the service runs them
        writer.flush_due()
        if not recording.preparing:
            break
        time.sleep(0.1)
    assert not recording.preparing, "the worker's episodes were never listed"
    meta = read_meta(tmp_path, "s1")
    assert meta is not None and [e["index"] for e in meta.episodes] == list(range(EPISODES))
    writer.close()


def test_a_killed_worker_loses_no_episode(tmp_path: Path) -> None:
    writer = record(tmp_path, True, [episodes("s1", 0, EPISODES)])
    for pid in worker_pids(writer):
        os.kill(pid, signal.SIGKILL)
    # the next busy batch finds the worker gone: a new one is started, the lost task redone in line
    writer.process(msgs(*episodes("s1", EPISODES, EPISODES)))
    writer.process(msgs(closed("s1", last_seq=2 * EPISODES * 4)))
    meta = read_meta(tmp_path, "s1")
    assert meta is not None and meta.status == "closed"
    assert [e["index"] for e in meta.episodes] == list(range(2 * EPISODES))
    assert meta.missing_seqs == [] and meta.last_seq == 2 * EPISODES * 4
    writer.close()


def test_a_reset_while_the_worker_prepares_loses_nothing(tmp_path: Path) -> None:
    """A failed batch resets the writer: what was in the worker comes back to no one, and the
    episodes are finished again from their part files when the recording is reloaded."""
    writer = record(tmp_path, True, [episodes("s1", 0, EPISODES)])
    writer.reset()
    writer.process(msgs(*episodes("s1", 0, 2)))  # a redelivery of the first ones: duplicates
    writer.process(msgs(closed("s1", last_seq=EPISODES * 4)))
    meta = read_meta(tmp_path, "s1")
    assert meta is not None and meta.status == "closed"
    assert [e["index"] for e in meta.episodes] == list(range(EPISODES))
    assert [int(load_episode(tmp_path, "s1", i)["seq"][-1]) for i in (0, EPISODES - 1)] == [4, EPISODES * 4]
    writer.close()
    assert part_files(tmp_path / "s1") == {}
