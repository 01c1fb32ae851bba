"""The sessions stream holds only the recorder's backlog: the step events it has written are
deleted from the stream (single and gathered), the lifecycle events stay; and the recorder gives
a stream made without a limit (by an older version) the PLATFORM_JETSTREAM_MAX_BYTES limit."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import nats
from nats.js.api import DiscardPolicy, StreamConfig
from platform_contracts import subjects
from platform_contracts.streams import DEFAULT_MAX_BYTES, MIN_MAX_BYTES, StreamShape
from platform_recorder.service import RecorderService
from platform_testing.nats_server import NatsServer
from recorder_testkit import closed, episode_events, publish, publish_batch, read_meta, started, wait_for


async def _held(js: Any, subject: str) -> int:
    info = await js.stream_info(subjects.SESSIONS_STREAM, subjects_filter=subject)
    return sum((info.state.subjects or {}).values())


async def test_written_step_events_leave_the_stream_and_lifecycle_events_stay(
        recorder_js: tuple[Any, Any], recorder_service: RecorderService, tmp_path: Path) -> None:
    _, js = recorder_js
    info = await js.stream_info(subjects.SESSIONS_STREAM)
    assert (info.config.max_bytes, info.config.discard) == (DEFAULT_MAX_BYTES, DiscardPolicy.NEW)
    sid = "s-trimmed"
    await publish(js, started(sid))
    single = episode_events(sid, 1, 0, 20)
    for event in single:
        await publish(js, event)
    gathered = episode_events(sid, 22, 1, 30)
    await publish_batch(js, sid, 1, gathered)
    await publish(js, closed(sid, last_seq=52))
    recordings = tmp_path / "recordings"
    await wait_for(lambda: (meta := read_meta(recordings, sid)) is not None and meta.status == "closed",
                   what=f"recording {sid} closed")

    async def trimmed() -> bool:
        return (await _held(js, subjects.SESSION_STEPS_WILDCARD) == 0
                and await _held(js, subjects.SESSION_STEP_BATCHES_WILDCARD) == 0)

    for _ in range(100):  # purged by the consumer loop within the trimmer's interval (1 s) of the write
        if await trimmed():
            break
        await asyncio.sleep(0.1)
    assert await trimmed(), "the written step events are deleted from the stream"
    assert await _held(js, subjects.SESSION_LIFECYCLE_WILDCARD) == 2, "STARTED and CLOSED stay (the broker's too)"
    meta = read_meta(recordings, sid)
    assert meta is not None and meta.last_seq == 52 and not meta.missing_seqs


async def test_a_stream_made_without_a_limit_gets_the_settings_limit(tmp_path: Path) -> None:
    server = NatsServer(store_dir=tmp_path / "nats")
    server.start()
    try:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        await js.add_stream(StreamConfig(name=subjects.SESSIONS_STREAM, subjects=[subjects.SESSION_EVENTS_WILDCARD],
                                         duplicate_window=120.0))
        await publish(js, started("s-before"))
        service = RecorderService(nc, tmp_path / "recordings", fetch_timeout=0.2,
                                  stream=StreamShape(max_bytes=MIN_MAX_BYTES))
        await service.start()
        try:
            info = await js.stream_info(subjects.SESSIONS_STREAM)
            assert (info.config.max_bytes, info.config.discard) == (MIN_MAX_BYTES, DiscardPolicy.NEW)
            assert info.config.duplicate_window == 120.0 and info.state.messages >= 1, "the rest kept"
        finally:
            await service.stop()
        await nc.drain()
    finally:
        server.stop()
