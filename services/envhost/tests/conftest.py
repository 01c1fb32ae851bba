"""Fixtures of the env host's tests (helpers in envhost_testkit.py)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from platform_contracts.streams import ensure_sessions_stream
from platform_testing.nats_server import NatsServer

sys.path.insert(0, str(Path(__file__).parent))  # tests import envhost_testkit (importlib mode)

from envhost_testkit import EnvHostProcess, EnvStream, StepLink


@pytest.fixture
def envhost_factory(nats_server: NatsServer) -> Iterator[Callable[..., EnvHostProcess]]:
    """Start env hosts (on the shared nats-server unless `nats_url` is given); each is stopped
    and its run dir removed at the end of the test."""
    started: list[EnvHostProcess] = []

    def start(nats_url: str | None = None, capacity: int = 8, **env: str) -> EnvHostProcess:
        host = EnvHostProcess(nats_url or nats_server.url, capacity=capacity, **env)
        started.append(host)
        return host.start()

    yield start
    for host in started:
        host.cleanup()


@pytest.fixture(scope="module")
def envhost(nats_server: NatsServer) -> Iterator[EnvHostProcess]:
    """One env host for a test module, on the shared nats-server."""
    host = EnvHostProcess(nats_server.url).start()
    yield host
    host.cleanup()


@pytest.fixture
async def js(nats_client: Any) -> Any:
    js = nats_client.jetstream()
    await ensure_sessions_stream(js)
    return js


@pytest.fixture
async def open_stream() -> AsyncIterator[Callable[[str, str], EnvStream]]:
    """Open streams to an env host (address, session id); all are closed at the end."""
    streams: list[EnvStream] = []

    def open_(address: str, session_id: str) -> EnvStream:
        stream = EnvStream(address, session_id)
        streams.append(stream)
        return stream

    yield open_
    for stream in streams:
        await stream.channel.close()


@pytest.fixture
async def open_link() -> AsyncIterator[Callable[..., Any]]:
    """Open step links to an env host (`StepLink.open` arguments); all are closed at the end."""
    links: list[StepLink] = []

    async def open_(address: str, session_id: str, **kwargs: Any) -> StepLink:
        link = await StepLink.open(address, session_id, **kwargs)
        links.append(link)
        return link

    yield open_
    for link in links:
        await link.close()
