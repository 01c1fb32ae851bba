"""Fixtures of the gateway's tests: a real environment server, stand-ins for the broker and the
recorder, and the gateway itself under a real uvicorn on a free port.

The stand-in broker and recorder are small NATS responders speaking the contracts
(control.proto, the recorder's JSON API); the real broker and recorder are covered by their
own tests and by the cross-service tests in tests/.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc.aio
import httpx
import pytest
import uvicorn
from platform_bus import connect, flush_queued
from platform_contracts import subjects
from platform_gateway.app import create_app
from platform_gateway.config import Settings
from platform_gateway.transport_bounds import uvicorn_config
from platform_testing.nats_server import NatsServer
from platform_testing.ports import free_port
from simulusion.control.v1 import control_pb2 as ctl
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.session.v1.options_pb2 import SessionOptions

sys.path.insert(0, str(Path(__file__).parent))  # tests import recorder_stand_in (importlib mode)
from recorder_stand_in import StandInRecorder

REPO = Path(__file__).resolve().parents[3]
SERVER_PACKAGE = REPO / "sdk" / "src" / "platform_sdk" / "server"


def wait_for_env_server_package(timeout: float = 600.0) -> None:
    """The environment server is written by another engineer at the same time: wait for it."""
    deadline = time.monotonic() + timeout
    while not (SERVER_PACKAGE / "cli.py").exists():
        if time.monotonic() > deadline:
            pytest.fail(f"{SERVER_PACKAGE} did not appear within {timeout:g} s")
        time.sleep(2)


@dataclass
class EnvServer:
    """A real `python -m platform_sdk` process serving one environment."""

    process: subprocess.Popen[str]
    address: str

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_env_server(gym_id: str = "CartPole-v1", kwargs: dict[str, Any] | None = None,
                     timeout: float = 60.0) -> EnvServer:
    wait_for_env_server_package()
    port = free_port()
    args = [sys.executable, "-m", "platform_sdk", "--gym-id", gym_id, "--listen", f"127.0.0.1:{port}",
            "--kwargs", json.dumps(kwargs or {})]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    deadline = time.monotonic() + timeout
    line = ""
    while time.monotonic() < deadline:  # readline blocks, but the server prints or exits
        line = process.stdout.readline() if process.stdout else ""
        if line.startswith("READY "):
            return EnvServer(process, line.split(maxsplit=1)[1].strip())
        if not line and process.poll() is not None:
            break
    process.kill()
    raise RuntimeError(f"the environment server did not start: {line!r}, exit {process.poll()}")


@pytest.fixture(scope="session")
def env_server() -> Iterator[EnvServer]:
    """One CartPole server (rgb_array frames) for the whole test session."""
    server = start_env_server(kwargs={"render_mode": "rgb_array"})
    yield server
    server.stop()


@pytest.fixture
def new_env_server() -> Iterator[Callable[..., EnvServer]]:
    """Start environment servers of the test's own (stopped at the end of the test)."""
    servers: list[EnvServer] = []

    def start(**kwargs: Any) -> EnvServer:
        servers.append(start_env_server(**kwargs))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


async def fetch_spec(address: str) -> env_pb.SpecResponse:
    async with grpc.aio.insecure_channel(address) as channel:
        connect = channel.stream_stream(
            "/simulusion.env.v1.Environment/Connect",
            request_serializer=env_pb.EnvRequest.SerializeToString,
            response_deserializer=env_pb.EnvResponse.FromString,
        )
        call = connect()
        await call.write(env_pb.EnvRequest(id=1, spec=env_pb.SpecRequest()))
        response = await asyncio.wait_for(call.read(), 10)
        call.cancel()
        return response.spec


@dataclass
class StandInBroker:
    """A stand-in for the broker (another engineer's service): the control.proto replies.

    Every session it creates runs on `address`. The real broker is tested in services/broker
    and, with every service, in tests/.
    """

    nc: Any
    address: str
    spec: env_pb.SpecResponse
    step_address: str = ""  # the step link of sessions it creates (empty: the gRPC stream)
    catalog: dict[str, str] = field(default_factory=lambda: {"cartpole": "CartPole-v1"})
    entries: list[ctl.CatalogEntry] = field(default_factory=list)  # listed after `catalog`'s, as they are
    create_error: ctl.ControlError | None = None  # when set, every create answers it
    sessions: dict[str, ctl.SessionInfo] = field(default_factory=dict)
    headers: list[dict[str, str]] = field(default_factory=list)
    subs: list[Any] = field(default_factory=list)

    async def start(self) -> StandInBroker:
        handlers: dict[str, Callable[[bytes], Awaitable[bytes]]] = {
            subjects.BROKER_CREATE_SESSION: self._create,
            subjects.BROKER_GET_SESSION: self._get,
            subjects.BROKER_LIST_SESSIONS: self._list,
            subjects.BROKER_CLOSE_SESSION: self._close,
            subjects.BROKER_LIST_ENVS: self._envs,
        }
        for subject, handler in handlers.items():
            async def respond(msg: Any, handler: Callable[[bytes], Awaitable[bytes]] = handler) -> None:
                self.headers.append(dict(msg.headers or {}))
                await msg.respond(await handler(msg.data))

            self.subs.append(await self.nc.subscribe(subject, queue=subjects.BROKER_QUEUE, cb=respond))
        await flush_queued(self.nc)
        return self

    async def use_env_server(self, address: str) -> None:
        """Sessions created from now on run on the environment server at `address`."""
        self.address, self.spec = address, await fetch_spec(address)

    async def stop(self) -> None:
        for sub in self.subs:
            await sub.unsubscribe()
        await flush_queued(self.nc)

    def add(self, state: int = ctl.SESSION_STATE_RUNNING, address: str | None = None, **fields: Any) -> ctl.SessionInfo:
        """Put a session straight into the table (as the real broker would after a create)."""
        fields.setdefault("step_address", self.step_address)
        fields.setdefault("options", SessionOptions(env_id="cartpole", kwargs_json="{}", num_envs=1))
        info = ctl.SessionInfo(
            id=f"s{uuid.uuid4().hex[:12]}", host_id="h1", host_address=address or self.address, state=state,
            created_at=time.time(), last_active_at=time.time(), spec=self.spec, **fields,
        )
        self.sessions[info.id] = info
        return info

    async def _create(self, data: bytes) -> bytes:
        options = ctl.CreateSessionRequest.FromString(data).options
        if self.create_error is not None:
            return ctl.SessionReply(error=self.create_error).SerializeToString()
        if options.env_id not in self.catalog:
            error = ctl.ControlError(code="not_found", message=f"unknown env {options.env_id!r}; known: cartpole")
            return ctl.SessionReply(error=error).SerializeToString()
        return ctl.SessionReply(session=self.add(options=options)).SerializeToString()

    async def _get(self, data: bytes) -> bytes:
        request = ctl.GetSessionRequest.FromString(data)
        info = self.sessions.get(request.session_id)
        if info is None:
            error = ctl.ControlError(code="not_found", message=f"no session {request.session_id!r}")
            return ctl.SessionReply(error=error).SerializeToString()
        return ctl.SessionReply(session=info).SerializeToString()

    async def _list(self, data: bytes) -> bytes:
        request = ctl.ListSessionsRequest.FromString(data)
        sessions = [s for s in self.sessions.values()
                    if request.include_closed or s.state == ctl.SESSION_STATE_RUNNING]
        return ctl.ListSessionsReply(sessions=sessions).SerializeToString()

    async def _close(self, data: bytes) -> bytes:
        request = ctl.CloseSessionRequest.FromString(data)
        info = self.sessions.get(request.session_id)
        if info is None:
            error = ctl.ControlError(code="not_found", message=f"no session {request.session_id!r}")
            return ctl.SessionReply(error=error).SerializeToString()
        info.state = ctl.SESSION_STATE_CLOSED
        info.reason = request.reason
        return ctl.SessionReply(session=info).SerializeToString()

    async def _envs(self, data: bytes) -> bytes:
        entries = [ctl.CatalogEntry(id=k, description=f"{v} from Gymnasium", gymnasium_id=v)
                   for k, v in self.catalog.items()]
        return ctl.ListEnvsReply(envs=[*entries, *self.entries]).SerializeToString()


@pytest.fixture
async def broker(nats_client: Any, env_server: EnvServer) -> AsyncIterator[StandInBroker]:
    stand_in = await StandInBroker(nats_client, env_server.address, await fetch_spec(env_server.address)).start()
    yield stand_in
    await stand_in.stop()


@pytest.fixture
async def start_broker(nats_client: Any) -> AsyncIterator[Callable[[str, env_pb.SpecResponse], Awaitable[StandInBroker]]]:
    """Start stand-in brokers whose sessions run on an env host at `address` with `spec` (a test's
    own stand-in env host); each is stopped at the end of the test."""
    started: list[StandInBroker] = []

    async def start(address: str, spec: env_pb.SpecResponse) -> StandInBroker:
        started.append(await StandInBroker(nats_client, address, spec).start())
        return started[-1]

    yield start
    for stand_in in started:
        await stand_in.stop()


@dataclass
class RunningGateway:
    url: str
    http: httpx.AsyncClient
    server: uvicorn.Server
    app: Any

    @property
    def ws_url(self) -> str:
        return "ws" + self.url[len("http"):]


GatewayFactory = Callable[..., Awaitable[RunningGateway]]


@pytest.fixture
async def start_gateway(nats_server: NatsServer) -> AsyncIterator[GatewayFactory]:
    """Start the gateway app under a real uvicorn on a free port (settings as keyword arguments)."""
    running: list[tuple[RunningGateway, asyncio.Task[None], Any]] = []

    async def start(**overrides: Any) -> RunningGateway:
        settings = Settings(**{"nats_url": nats_server.url, "port": free_port(), **overrides})
        nc = await connect(settings.nats_url, name="platform-gateway")
        app = create_app(settings, nc)
        config = uvicorn_config(app, settings, log_level="warning")  # the gateway's own transport and bounds
        server = uvicorn.Server(config)
        task = asyncio.create_task(server.serve())
        for _ in range(500):
            if server.started:
                break
            if task.done():
                task.result()
            await asyncio.sleep(0.01)
        url = f"http://127.0.0.1:{settings.port}"
        gateway = RunningGateway(url, httpx.AsyncClient(base_url=url, timeout=30), server, app)
        running.append((gateway, task, nc))
        return gateway

    yield start
    for gateway, task, nc in running:
        await gateway.http.aclose()
        gateway.server.should_exit = True
        await asyncio.wait_for(task, 15)
        if not nc.is_closed:
            await nc.close()


@pytest.fixture
async def gateway(start_gateway: GatewayFactory) -> RunningGateway:
    return await start_gateway()


@dataclass
class StandInEnvHost:
    """A stand-in for the env host (another engineer's service) whose instance died: every
    request is answered ERROR_CODE_UNAVAILABLE with a log tail. It keeps what it received."""

    server: Any
    address: str
    metadata: list[dict[str, str]] = field(default_factory=list)
    requests: list[env_pb.EnvRequest] = field(default_factory=list)


async def _stand_in_env_host(answer: bool) -> StandInEnvHost:
    import grpc

    host: StandInEnvHost

    async def connect(request_iterator: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        host.metadata.append({k: v for k, v in context.invocation_metadata() or ()})
        async for data in request_iterator:
            request = env_pb.EnvRequest.FromString(data)
            host.requests.append(request)
            if not answer:
                continue
            error = env_pb.Error(code=env_pb.ERROR_CODE_UNAVAILABLE, message="the instance died (exit code -9)",
                                 log_tail="Killed\n")
            yield env_pb.EnvResponse(id=request.id, error=error).SerializeToString()

    server = grpc.aio.server()
    handler = grpc.method_handlers_generic_handler(
        "simulusion.env.v1.Environment", {"Connect": grpc.stream_stream_rpc_method_handler(connect)}
    )
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    host = StandInEnvHost(server, f"127.0.0.1:{port}")
    return host


@pytest.fixture
async def dead_env_host() -> AsyncIterator[StandInEnvHost]:
    host = await _stand_in_env_host(answer=True)
    yield host
    await host.server.stop(None)


@pytest.fixture
async def silent_env_host() -> AsyncIterator[StandInEnvHost]:
    """A stand-in env host whose instance hangs: requests are taken and never answered."""
    host = await _stand_in_env_host(answer=False)
    yield host
    await host.server.stop(None)


@pytest.fixture
async def stand_in_recorder(nats_server: NatsServer) -> AsyncIterator[StandInRecorder]:
    """A stand-in recorder answering the recorder's contract on the test's NATS server."""
    import nats

    nc = await nats.connect(nats_server.url)
    recorder = StandInRecorder(nc)
    await recorder.start()
    yield recorder
    await recorder.stop()
    await nc.drain()
