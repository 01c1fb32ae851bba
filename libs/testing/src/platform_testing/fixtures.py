"""Pytest fixtures shared by the packages' tests (loaded as a plugin from conftest.py)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

from platform_testing.nats_server import NatsServer
from platform_testing.oidc_provider import OidcProvider
from platform_testing.s3_server import S3Server


@pytest.fixture(scope="session")
def nats_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatsServer]:
    """One real nats-server with JetStream for the whole test session."""
    server = NatsServer(store_dir=tmp_path_factory.mktemp("nats"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """One real S3 API server (moto's server mode, objects in memory) for the whole test session."""
    server = S3Server(log_path=tmp_path_factory.mktemp("s3") / "moto.log")
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def oidc_provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OidcProvider]:
    """One real OpenID provider (oidc-provider-mock: the `oidc` extra) for the whole test session."""
    provider = OidcProvider(log_path=tmp_path_factory.mktemp("oidc") / "provider.log").start()
    yield provider
    provider.stop()


@pytest.fixture
def s3_bucket() -> str:
    """A bucket name of this test's own (not made: the recorder makes a missing bucket)."""
    return f"test-{uuid.uuid4().hex[:16]}"


@pytest.fixture
def unique_prefix() -> str:
    """A per-test name prefix, so tests share one server without sharing subjects or streams."""
    return f"t{uuid.uuid4().hex[:10]}"


@pytest.fixture
async def nats_client(nats_server: NatsServer) -> AsyncIterator[object]:
    import nats

    nc = await nats.connect(nats_server.url)
    yield nc
    await nc.drain()
