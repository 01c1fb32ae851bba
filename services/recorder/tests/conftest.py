"""Fixtures of the recorder's tests (helpers in recorder_testkit.py)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from platform_testing.nats_server import NatsServer
from platform_testing.s3_server import S3Server

sys.path.insert(0, str(Path(__file__).parent))  # tests import recorder_testkit (importlib mode)


@pytest.fixture
def recorder_nats(tmp_path: Path) -> Iterator[NatsServer]:
    """A nats-server of this test alone: the stream and consumer names are fixed, so tests
    sharing one server would share the recorder's durable consumer."""
    server = NatsServer(store_dir=tmp_path / "nats")
    server.start()
    yield server
    server.stop()


@pytest.fixture
async def recorder_js(recorder_nats: NatsServer) -> AsyncIterator[tuple[Any, Any]]:
    """(client, JetStream context) on the test's server, with the sessions stream in place."""
    import nats
    from platform_contracts.streams import ensure_sessions_stream

    nc = await nats.connect(recorder_nats.url)
    js = nc.jetstream()
    await ensure_sessions_stream(js)
    yield nc, js
    await nc.drain()


@pytest.fixture
async def recorder_service(recorder_js: tuple[Any, Any], tmp_path: Path) -> AsyncIterator[Any]:
    """The recorder running in-process on the test's server, writing under tmp_path/recordings."""
    import nats
    from platform_recorder.service import RecorderService

    nc, _ = recorder_js
    own = await nats.connect(nc.connected_url.geturl())
    service = RecorderService(own, tmp_path / "recordings", fetch_timeout=0.2)
    await service.start()
    yield service
    await service.stop()
    await own.drain()


@pytest.fixture
def s3_storage(s3_server: S3Server, s3_bucket: str) -> Any:
    """An S3Storage on the session's S3 API server, in this test's own bucket (made now)."""
    from platform_recorder.storage.s3 import open_s3_storage

    env = s3_server.env(s3_bucket)
    return open_s3_storage(
        env["PLATFORM_RECORDINGS"], s3_server.endpoint, s3_server.access_key, s3_server.secret_key,
        s3_server.region, secure=False,
    )
