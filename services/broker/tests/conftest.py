"""Fixtures of the broker's tests: a stand-in env host, a broker in-process, a request helper."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import nats
import pytest
from google.protobuf.message import Message
from platform_bus import flush_queued
from platform_broker.catalog import load_catalog
from platform_broker.service import BrokerService
from platform_broker.store import SessionStore
from platform_contracts import subjects
from platform_testing.nats_server import NatsServer
from simulusion.control.v1 import control_pb2
from simulusion.env.v1 import environment_pb2

R = TypeVar("R", bound=Message)


class StandInEnvHost:
    """A small in-test stand-in for the env host service (platform_envhost), which is not the
    broker's: it answers start/claim/stop/list and publishes heartbeats, and records what it was asked.
    The real env host is tested with the broker in tests/ across services.
    """

    def __init__(self, nc: Any, host_id: str, capacity: int = 4, address: str = "127.0.0.1:7001",
                 heartbeat_interval: float = 0.2, step_address: str = "") -> None:
        self.nc = nc
        self.host_id = host_id
        self.capacity = capacity
        self.address = address
        self.step_address = step_address
        self.heartbeat_interval = heartbeat_interval
        self.instances: dict[str, control_pb2.InstanceInfo] = {}
        self.active: set[str] = set()  # sessions that report activity "now" in every heartbeat
        self.start_error: control_pb2.ControlError | None = None
        self.start_delay = 0.0
        self.starts: list[control_pb2.StartInstanceRequest] = []
        self.claims: list[control_pb2.ClaimInstanceRequest] = []
        self.pooled: dict[str, control_pb2.CatalogEntry] = {}  # warm pool instances not claimed yet
        self.stops: list[control_pb2.StopInstanceRequest] = []
        self._subs: list[Any] = []
        self._task: asyncio.Task[None] | None = None

    def add_instance(self, session_id: str, alive: bool = True, last_active_at: float | None = None) -> None:
        self.instances[session_id] = control_pb2.InstanceInfo(
            session_id=session_id, alive=alive, last_active_at=time.time() if last_active_at is None else last_active_at)

    def heartbeat(self) -> control_pb2.HostHeartbeat:
        now = time.time()
        for session_id in self.active:
            if session_id in self.instances:
                self.instances[session_id].last_active_at = now
        alive = [info for info in self.instances.values() if info.alive]
        return control_pb2.HostHeartbeat(host_id=self.host_id, address=self.address, capacity=self.capacity,
                                         running=len(alive), time=now, instances=alive,
                                         step_address=self.step_address)

    async def start(self) -> StandInEnvHost:
        self._subs = [
            await self.nc.subscribe(subjects.envhost_start(self.host_id), cb=self._on_start),
            await self.nc.subscribe(subjects.envhost_stop(self.host_id), cb=self._on_stop),
            await self.nc.subscribe(subjects.envhost_claim(self.host_id), cb=self._on_claim),
            await self.nc.subscribe(subjects.envhost_list(self.host_id), cb=self._on_list),
        ]
        self._task = asyncio.create_task(self._beat())
        await flush_queued(self.nc)
        return self

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for sub in self._subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()

    async def _beat(self) -> None:
        while True:
            await self.nc.publish(subjects.ENVHOST_HEARTBEAT, self.heartbeat().SerializeToString())
            await asyncio.sleep(self.heartbeat_interval)

    async def _on_start(self, msg: Any) -> None:
        request = control_pb2.StartInstanceRequest.FromString(msg.data)
        self.starts.append(request)
        if self.start_delay:
            await asyncio.sleep(self.start_delay)
        if self.start_error is not None:
            reply = control_pb2.StartInstanceReply(error=self.start_error)
        else:
            self.add_instance(request.session_id, last_active_at=0.0)
            if request.pooled:
                self.pooled[request.session_id] = request.entry
            reply = control_pb2.StartInstanceReply(spec=self.spec_of(request.entry))
        await msg.respond(reply.SerializeToString())

    @staticmethod
    def spec_of(entry: control_pb2.CatalogEntry) -> environment_pb2.SpecResponse:
        return environment_pb2.SpecResponse(env_id=entry.gymnasium_id or entry.id)

    async def _on_claim(self, msg: Any) -> None:
        request = control_pb2.ClaimInstanceRequest.FromString(msg.data)
        self.claims.append(request)
        if request.pool_slot not in self.pooled or request.pool_slot not in self.instances:
            reply = control_pb2.ClaimInstanceReply(error=control_pb2.ControlError(
                code="not_found", message=f"no warm pool instance {request.pool_slot} on this env host"))
        else:
            entry = self.pooled.pop(request.pool_slot)
            info = self.instances.pop(request.pool_slot)
            info.session_id = request.session_id
            self.instances[request.session_id] = info
            reply = control_pb2.ClaimInstanceReply(spec=self.spec_of(entry))
        await msg.respond(reply.SerializeToString())

    async def _on_stop(self, msg: Any) -> None:
        request = control_pb2.StopInstanceRequest.FromString(msg.data)
        self.stops.append(request)
        stopped = self.instances.pop(request.session_id, None) is not None
        self.pooled.pop(request.session_id, None)
        await msg.respond(control_pb2.StopInstanceReply(stopped=stopped).SerializeToString())

    async def _on_list(self, msg: Any) -> None:
        reply = control_pb2.ListInstancesReply(instances=list(self.instances.values()))
        await msg.respond(reply.SerializeToString())


async def call(nc: Any, subject: str, request: Message, reply_cls: type[R], timeout: float = 10.0) -> R:
    """One request to the broker, parsed as `reply_cls`."""
    msg = await nc.request(subject, request.SerializeToString(), timeout=timeout)
    return reply_cls.FromString(msg.data)


async def wait_for(predicate: Callable[[], Awaitable[bool]], timeout: float = 10.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not await predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.05)


@pytest.fixture
def ask(nc: Any) -> Callable[..., Awaitable[Any]]:
    """`await ask(subject, request, ReplyClass)`: one request to the broker on the test's client."""

    async def ask_(subject: str, request: Message, reply_cls: type[R], timeout: float = 10.0) -> R:
        return await call(nc, subject, request, reply_cls, timeout)

    return ask_


@pytest.fixture
def eventually() -> Callable[..., Awaitable[None]]:
    """`await eventually(async_predicate, timeout, what)`: poll until true, fail on timeout."""
    return wait_for


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path}/broker.db"


@pytest.fixture(scope="module")
def broker_nats(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatsServer]:
    """A real nats-server for one test module of the broker.

    The broker's subjects are fixed names (no per-test prefix is possible), so its tests get a
    server of their own: env hosts or brokers of other packages' tests cannot answer or
    heartbeat into them. Within a module, tests use unique host ids and consumer names.
    """
    server = NatsServer(store_dir=tmp_path_factory.mktemp("broker-nats"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
async def nc(broker_nats: NatsServer) -> AsyncIterator[Any]:
    client = await nats.connect(broker_nats.url)
    yield client
    await client.drain()


@pytest.fixture
async def envhost(nc: Any, unique_prefix: str) -> AsyncIterator[Callable[..., Awaitable[StandInEnvHost]]]:
    """Start stand-in env hosts: `await envhost(name, capacity=...)`."""
    hosts: list[StandInEnvHost] = []

    async def start(name: str = "h1", **options: Any) -> StandInEnvHost:
        host = await StandInEnvHost(nc, f"{unique_prefix}-{name}", **options).start()
        hosts.append(host)
        return host

    yield start
    for host in hosts:
        await host.stop()


@pytest.fixture
async def broker(broker_nats: NatsServer, db_url: str,
                 unique_prefix: str) -> AsyncIterator[Callable[..., Awaitable[BrokerService]]]:
    """Start the broker in-process: `await broker(idle_timeout=..., ...)`; stopped after the test."""
    started: list[tuple[BrokerService, Any]] = []

    async def start(**options: Any) -> BrokerService:
        client = await nats.connect(broker_nats.url)
        options.setdefault("catalog", load_catalog(None))
        options.setdefault("warmup", 0.5)
        service = BrokerService(client, SessionStore.from_url(db_url), durable=f"{unique_prefix}-broker",
                                **options)
        started.append((service, client))
        await service.start()
        return service

    yield start
    for service, client in started:
        await service.stop()
        with contextlib.suppress(Exception):
            await client.jetstream().delete_consumer(subjects.SESSIONS_STREAM, f"{unique_prefix}-broker")
        await client.drain()
        await service.store.close()
