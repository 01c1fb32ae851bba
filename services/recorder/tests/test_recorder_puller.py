"""The puller on a real nats-server: batches in stream order, gathering, and after a rewind no
message of an earlier pull request (buffered or on its way) is handed out."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import Any

import pytest
from nats.js.api import AckPolicy
from platform_contracts import subjects
from platform_recorder.service import RecorderService
from platform_recorder.writing.consumer import open_consumer, rewind
from recorder_testkit import (
    episode_events,
    load_episode,
    publish,
    read_meta,
    same_partition_ids,
    started,
    wait_drained,
    wait_for,
)

# The puller tests run partition 0's consumer on sessions of that partition.
CONSUMER = subjects.recorder_consumer(0)


def stream_seqs(msgs: list[Any]) -> list[int]:
    return [m.metadata.sequence.stream for m in msgs]


async def publish_steps(js: Any, session_id: str, count: int) -> None:
    for event in episode_events(session_id, 1, 0, count - 1, last=""):
        await publish(js, event)


async def test_batches_come_in_stream_order_and_gather(recorder_js: tuple[Any, Any], unique_prefix: str) -> None:
    nc, js = recorder_js
    first_session, second_session = same_partition_ids(unique_prefix, 2)
    puller = await open_consumer(nc, js, 0, ack_wait=30, batch=4, expires=0.5)
    try:
        assert puller.batch == 4
        start = time.monotonic()
        assert await puller.next_batch(timeout=0.3, gather=0.05) == []  # nothing yet
        assert 0.25 < time.monotonic() - start < 2
        await publish_steps(js, first_session, 10)
        batches = [await puller.next_batch(timeout=2, gather=0.05) for _ in range(3)]
        assert [len(b) for b in batches] == [4, 4, 2]
        assert [s for b in batches for s in stream_seqs(b)] == list(range(1, 11))
        await batches[-1][-1].ack()  # AckPolicy.ALL: acks all ten
        info = await js.consumer_info(subjects.SESSIONS_STREAM, CONSUMER)
        assert info.config.ack_policy == AckPolicy.ALL
        await wait_for_acked(js, 10)

        # a batch gathers for `gather` seconds after its first message
        async def trickle() -> None:
            for event in episode_events(second_session, 1, 0, 2, last=""):
                await publish(js, event)
                await asyncio.sleep(0.1)

        task = asyncio.create_task(trickle())
        batch = await puller.next_batch(timeout=2, gather=0.5)
        await task
        assert stream_seqs(batch) == [11, 12, 13]
    finally:
        await puller.stop()


async def wait_for_acked(js: Any, floor: int) -> None:
    deadline = time.monotonic() + 10
    while True:
        info = await js.consumer_info(subjects.SESSIONS_STREAM, CONSUMER)
        if info.ack_floor and info.ack_floor.stream_seq >= floor:
            return
        assert time.monotonic() < deadline, f"ack floor {info.ack_floor} never reached {floor}"
        await asyncio.sleep(0.05)


async def test_after_a_rewind_delivery_restarts_from_the_ack_floor(
    recorder_js: tuple[Any, Any], unique_prefix: str
) -> None:
    nc, js = recorder_js
    puller = await open_consumer(nc, js, 0, ack_wait=30, batch=3, expires=0.5)
    events = episode_events(same_partition_ids(unique_prefix, 1)[0], 1, 0, 5, last="")  # 6 events
    try:
        for event in events[:4]:
            await publish(js, event)
        first = await puller.next_batch(timeout=2, gather=0.05)
        assert stream_seqs(first) == [1, 2, 3]
        await first[-1].ack()
        await wait_for_acked(js, 3)
        failed = await puller.next_batch(timeout=2, gather=0.05)  # "could not be written": no ack
        assert stream_seqs(failed) == [4]
        for event in events[4:]:  # delivered on the pending request: buffered
            await publish(js, event)
        await asyncio.sleep(0.2)
        await puller.quiesce()
        await rewind(js, 0, ack_wait=30, batch=3)
        await puller.restart()
        again: list[Any] = []
        while len(again) < 3:
            got = await puller.next_batch(timeout=3, gather=0.05)
            assert got, "nothing delivered after the rewind"
            again += got
        assert stream_seqs(again) == [4, 5, 6]  # from the floor, in order, each once
        assert await puller.next_batch(timeout=0.3, gather=0.05) == []
    finally:
        await puller.stop()


@pytest.mark.timeout(60)
async def test_failed_batch_with_more_buffered_is_written_without_gap(
    recorder_js: tuple[Any, Any], tmp_path: Path, unique_prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Small batches: when a batch fails, later messages are already buffered; after the rewind
    they must not be written before the failed ones (that would log a GAP)."""
    caplog.set_level(logging.INFO, logger="platform_recorder")
    nc, js = recorder_js
    root = tmp_path / "recordings"
    service = RecorderService(nc, root, batch=3, fetch_timeout=0.3, meta_interval=0, gather=0.01)
    await service.start()
    try:
        sid = f"{unique_prefix}-small"
        await publish(js, started(sid))
        await wait_for(lambda: read_meta(root, sid), what="the recording folder")
        blocker = root / sid / "episode-000001.part"
        blocker.mkdir()  # episode 1's part file cannot be opened: its batches fail
        events = [*episode_events(sid, 1, 0, 5), *episode_events(sid, 7, 1, 6)]
        for event in events:
            await publish(js, event)
        await wait_for(lambda: "could not be written" in caplog.text, what="a failed batch")
        blocker.rmdir()
        meta = await wait_for(
            lambda: (m := read_meta(root, sid)) and len(m.episodes) == 2 and m, timeout=30, what="episode 1"
        )
        await wait_drained(js)
    finally:
        await service.stop()
    assert "GAP" not in caplog.text and meta.missing_seqs == [] and meta.orphan_seqs == []
    seqs = [
        s for e in meta.episodes for s in [e["first_seq"], *load_episode(root, sid, e["index"])["seq"].tolist()]
    ]
    assert seqs == list(range(1, len(events) + 1))


async def test_a_message_lost_on_the_way_is_never_acked_unwritten(
    recorder_js: tuple[Any, Any], recorder_service: RecorderService, tmp_path: Path, unique_prefix: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A message nats-py drops (a slow consumer) shows as a gap in consumer sequences: the
    recorder writes what came before it, rewinds, and gets the rest again in order; acking past
    the gap would have acked the lost message unwritten (AckPolicy.ALL)."""
    _, js = recorder_js
    sid = f"{unique_prefix}-lost"
    puller = recorder_service.partitions[subjects.session_partition(sid)].loop.puller
    take = puller._on_msg
    lost: list[int] = []

    def losing_one(msg: Any) -> None:
        if msg.reply and not lost and msg.metadata.sequence.stream == 4:
            lost.append(msg.metadata.sequence.stream)  # as nats-py drops a message past its limits
            return
        take(msg)

    puller._on_msg = losing_one  # type: ignore[method-assign]
    caplog.set_level(logging.WARNING, logger="platform_recorder.writing.puller")
    await publish(js, started(sid))
    for event in episode_events(sid, 1, 0, 8):
        await publish(js, event)
    root = tmp_path / "recordings"
    meta = await wait_for(lambda: (m := read_meta(root, sid)) and m.episodes and m, what="the episode")
    assert lost == [4]
    assert "lost on the way" in caplog.text
    assert meta.last_seq == 9 and meta.missing_seqs == [] and not meta.orphan_seqs
    assert load_episode(root, sid, 0)["seq"].tolist() == list(range(2, 10))


async def test_pull_requests_ask_for_at_most_max_bytes(
    recorder_js: tuple[Any, Any], unique_prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Large messages (gathered steps with images) come in requests of at most `max_bytes`, so
    a burst never passes nats-py's pending limits; a request ending at its byte limit is normal."""
    nc, js = recorder_js
    megabytes = 2
    for n in range(12):
        await js.publish(subjects.session_step_batches(f"{unique_prefix}-big"), b"\x00" * (megabytes << 20),
                         headers={"Nats-Msg-Id": f"{unique_prefix}-big:batch:{n + 1}"}, timeout=10)
    puller = await open_consumer(nc, js, subjects.session_partition(f"{unique_prefix}-big"), ack_wait=30, batch=256,
                                 expires=0.5)
    puller.max_bytes = 5 << 20  # what the next requests ask for: two of these messages fit
    take = puller._on_msg
    ends_at_max_bytes: list[str] = []

    def counting(msg: Any) -> None:
        if not msg.reply and (msg.headers or {}).get("Status") == "409":
            ends_at_max_bytes.append((msg.headers or {}).get("Description", ""))
        take(msg)

    puller._on_msg = counting  # type: ignore[method-assign]
    caplog.set_level(logging.WARNING, logger="platform_recorder.writing.puller")
    try:
        seqs: list[int] = []
        while len(seqs) < 12:
            batch = await puller.next_batch(timeout=2, gather=0.3)
            assert batch, f"only {len(seqs)} of 12 messages came"
            seqs.extend(stream_seqs(batch))
        assert seqs == list(range(1, 13)) and not puller.gap
        # two messages a request: five of the six requests end at their byte limit
        assert len(ends_at_max_bytes) >= 5 and all("MaxBytes" in d for d in ends_at_max_bytes), ends_at_max_bytes
        assert "pull request ended" not in caplog.text  # 409 "Message Size Exceeds MaxBytes" is an end
    finally:
        await puller.stop()
