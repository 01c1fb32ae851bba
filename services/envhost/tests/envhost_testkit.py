"""Helpers of the env host's tests: the env host as a real process, sessions started over NATS,
a gRPC stream and a step link to the env host, and readers of the PLATFORM_SESSIONS stream."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import grpc
from platform_contracts import subjects
from platform_contracts.framing import encode_frame, read_frame
from platform_contracts.step_batches import parse_batch
from platform_testing.ports import free_port
from simulusion.bus.v1 import events_pb2 as bus_pb
from simulusion.control.v1 import control_pb2 as control_pb
from simulusion.session.v1.options_pb2 import SessionOptions
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.host.v1 import step_link_pb2 as link_pb

CARTPOLE = control_pb.CatalogEntry(id="cartpole", gymnasium_id="CartPole-v1")


class EnvHostProcess:
    """`python -m platform_envhost` as a child process, its stderr in a log file."""

    def __init__(self, nats_url: str, capacity: int = 8, **env: str) -> None:
        self.host_id = f"eh{uuid.uuid4().hex[:8]}"
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        # Where tests reach the step link (empty when the test leaves the choice to the env host).
        self.step_address = env.get("PLATFORM_ENVHOST_STEP_LISTEN", f"127.0.0.1:{free_port()}")
        self.run_dir = Path(tempfile.mkdtemp(prefix="eh-", dir="/tmp"))  # short: Unix socket paths
        self.log_path = self.run_dir / "envhost.log"
        self.env = {**os.environ, "PLATFORM_NATS_URL": nats_url, "PLATFORM_ENVHOST_ID": self.host_id,
                    "PLATFORM_ENVHOST_LISTEN": self.address, "PLATFORM_ENVHOST_STEP_LISTEN": self.step_address,
                    "PLATFORM_ENVHOST_CAPACITY": str(capacity), "PLATFORM_ENVHOST_RUN_DIR": str(self.run_dir), **env}
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30.0) -> EnvHostProcess:
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen([sys.executable, "-m", "platform_envhost"], env=self.env,
                                            stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if "serving on" in self.log():
                return self
            if self.process.poll() is not None:
                raise RuntimeError(f"env host exited with {self.process.returncode}:\n{self.log()}")
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"env host not serving after {timeout}s:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self, timeout: float = 30.0) -> int | None:
        """SIGTERM and wait; returns the exit code."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.run_dir, ignore_errors=True)

    def instance_pid(self, session_id: str) -> int:
        """The pid of the session's environment server (found by its socket path)."""
        needle = f"{session_id}.sock".encode()
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    if needle in (entry / "cmdline").read_bytes():
                        return int(entry.name)
                except OSError:
                    continue
        raise LookupError(f"no process for session {session_id}")


def new_session_id() -> str:
    return f"s{uuid.uuid4().hex[:12]}"


async def start_session(nc: Any, host_id: str, session_id: str, *, entry: control_pb.CatalogEntry = CARTPOLE,
                        kwargs_json: str = "", record: bool = False,
                        timeout: float = 60.0, **fields: Any) -> control_pb.StartInstanceReply:
    options = SessionOptions(env_id=entry.id, kwargs_json=kwargs_json, record=record, **fields)
    request = control_pb.StartInstanceRequest(session_id=session_id, entry=entry, options=options)
    msg = await nc.request(subjects.envhost_start(host_id), request.SerializeToString(), timeout=timeout)
    return control_pb.StartInstanceReply.FromString(msg.data)


async def stop_session(nc: Any, host_id: str, session_id: str, reason: str = "test") -> control_pb.StopInstanceReply:
    request = control_pb.StopInstanceRequest(session_id=session_id, reason=reason)
    msg = await nc.request(subjects.envhost_stop(host_id), request.SerializeToString(), timeout=30)
    return control_pb.StopInstanceReply.FromString(msg.data)


class _Requests:
    """Numbered requests, one at a time; `_exchange` sends one and reads its response."""

    next_id = 1

    async def _exchange(self, request: env_pb.EnvRequest) -> env_pb.EnvResponse:
        raise NotImplementedError

    async def request(self, request: env_pb.EnvRequest, timeout: float = 30.0) -> env_pb.EnvResponse:
        if not request.id:
            request.id = self.next_id
            self.next_id += 1
        return await asyncio.wait_for(self._exchange(request), timeout)

    async def reset(self, seed: int | None = None) -> env_pb.EnvResponse:
        return await self.request(env_pb.EnvRequest(reset=env_pb.ResetRequest(seed=seed)))

    async def step(self, action: int, timeout: float = 30.0, **agent: Any) -> env_pb.EnvResponse:
        from platform_contracts.values import datamap_from_dict
        from simulusion.env.v1 import values_pb2

        step = env_pb.StepRequest(action=values_pb2.Value(discrete=action))
        if agent:
            step.agent.CopyFrom(datamap_from_dict(agent))
        return await self.request(env_pb.EnvRequest(step=step), timeout)


class EnvStream(_Requests):
    """A session's gRPC stream to the env host, one request at a time."""

    def __init__(self, address: str, session_id: str) -> None:
        self.channel = grpc.aio.insecure_channel(address)
        stub = self.channel.stream_stream("/simulusion.env.v1.Environment/Connect",
                                          request_serializer=env_pb.EnvRequest.SerializeToString,
                                          response_deserializer=env_pb.EnvResponse.FromString)
        self.call = stub(metadata=((subjects.SESSION_ID_METADATA, session_id),))

    async def _exchange(self, request: env_pb.EnvRequest) -> env_pb.EnvResponse:
        await self.call.write(request)
        response = await self.call.read()
        assert response is not grpc.aio.EOF, "the env host ended the stream"
        return response

    async def close(self) -> None:
        await self.call.done_writing()
        await self.channel.close()


class StepLink(_Requests):
    """A session's step link to the env host (framed EnvRequest/EnvResponse over TCP)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 opened: link_pb.StepLinkOpened) -> None:
        self.reader, self.writer, self.opened = reader, writer, opened

    @classmethod
    async def open(cls, address: str, session_id: str, trace_context: dict[str, str] | None = None,
                   timeout: float = 10.0) -> StepLink:
        """Connect and send the StepLinkOpen; `opened` is the env host's answer."""
        host, _, port = address.rpartition(":")
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, int(port)), timeout)
        opening = link_pb.StepLinkOpen(session_id=session_id, trace_context=trace_context or {})
        writer.write(encode_frame(opening.SerializeToString()))
        opened = link_pb.StepLinkOpened.FromString(await asyncio.wait_for(read_frame(reader), timeout))
        return cls(reader, writer, opened)

    async def _exchange(self, request: env_pb.EnvRequest) -> env_pb.EnvResponse:
        self.writer.write(encode_frame(request.SerializeToString()))
        return env_pb.EnvResponse.FromString(await read_frame(self.reader))

    async def closed_by_peer(self, timeout: float = 10.0) -> bool:
        """Whether the env host closes the link (EOF) within `timeout`."""
        return await asyncio.wait_for(self.reader.read(1), timeout) == b""

    async def close(self) -> None:
        self.writer.close()
        try:
            await self.writer.wait_closed()
        except OSError:
            pass


async def read_subject(js: Any, subject: str, count: int, timeout: float = 15.0) -> list[Any]:
    """Read `count` messages of `subject` from the start of PLATFORM_SESSIONS (ephemeral consumer)."""
    sub = await js.subscribe(subject, ordered_consumer=True)
    try:
        messages = []
        deadline = time.monotonic() + timeout
        while len(messages) < count:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"{len(messages)} of {count} messages on {subject} within {timeout}s")
            messages.append(await sub.next_msg(timeout=remaining))
        return messages
    finally:
        await sub.unsubscribe()


async def stored_count(js: Any, subject: str) -> int:
    info = await js.stream_info(subjects.SESSIONS_STREAM, subjects_filter=subject)
    return sum((info.state.subjects or {}).values())


def any_partition(subject: str) -> str:
    """`subject` with any partition (a session with a life has its life's: see subjects.session_partition)."""
    return subject.rsplit(".", 1)[0] + ".*"


async def lifecycle_events(js: Any, session_id: str, count: int, timeout: float = 15.0) -> list[bus_pb.SessionEvent]:
    msgs = await read_subject(js, any_partition(subjects.session_lifecycle(session_id)), count, timeout)
    return [bus_pb.SessionEvent.FromString(m.data) for m in msgs]


def events_of(message: Any) -> list[bus_pb.StepEvent]:
    """The step events of a `.step` (one) or `.steps` (a StepEventBatch) message."""
    if subjects.session_event_kind(message.subject) == "steps":
        return list(parse_batch(message.data))
    return [bus_pb.StepEvent.FromString(message.data)]


async def recorded_messages(js: Any, session_id: str, count: int, timeout: float = 15.0) -> list[Any]:
    """The messages holding the session's first `count` step events, single (`.step`) or gathered
    (`.steps`), in stream order (the last one may hold more)."""
    sub = await js.subscribe(f"platform.session.{session_id}.>", ordered_consumer=True)
    try:
        messages: list[Any] = []
        events = 0
        deadline = time.monotonic() + timeout
        while events < count:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"{events} of {count} step events of session {session_id} within {timeout}s")
            message = await sub.next_msg(timeout=remaining)
            if subjects.session_event_kind(message.subject) in ("step", "steps"):
                messages.append(message)
                events += len(events_of(message))
        return messages
    finally:
        await sub.unsubscribe()


async def recorded_events(js: Any, session_id: str, count: int, timeout: float = 15.0) -> list[bus_pb.StepEvent]:
    """The session's first `count` step events (more when the last message holds more), in order."""
    return [e for m in await recorded_messages(js, session_id, count, timeout) for e in events_of(m)]


async def events_until_closed(js: Any, session_id: str, timeout: float = 15.0) -> list[bus_pb.StepEvent]:
    """Every step event of a session stored before its CLOSED (or CRASHED), in stream order."""
    sub = await js.subscribe(f"platform.session.{session_id}.>", ordered_consumer=True)
    try:
        events: list[bus_pb.StepEvent] = []
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no CLOSED or CRASHED of session {session_id} within {timeout}s")
            message = await sub.next_msg(timeout=remaining)
            kind = subjects.session_event_kind(message.subject)
            if kind in ("step", "steps"):
                events.extend(events_of(message))
            elif kind == "lifecycle":
                kind = bus_pb.SessionEvent.FromString(message.data).kind
                if kind in (bus_pb.SESSION_EVENT_KIND_CLOSED, bus_pb.SESSION_EVENT_KIND_CRASHED):
                    return events
    finally:
        await sub.unsubscribe()


async def stored_step_messages(js: Any, session_id: str) -> int:
    """Messages on the session's two step subjects."""
    return (await stored_count(js, any_partition(subjects.session_steps(session_id)))
            + await stored_count(js, any_partition(subjects.session_step_batches(session_id))))


async def next_heartbeat(nc: Any, host_id: str, timeout: float = 10.0) -> control_pb.HostHeartbeat:
    """The next heartbeat of env host `host_id` heard on `nc`."""
    beats: asyncio.Queue[control_pb.HostHeartbeat] = asyncio.Queue()

    async def on_beat(msg: Any) -> None:
        beat = control_pb.HostHeartbeat.FromString(msg.data)
        if beat.host_id == host_id:
            beats.put_nowait(beat)

    sub = await nc.subscribe(subjects.ENVHOST_HEARTBEAT, cb=on_beat)
    try:
        return await asyncio.wait_for(beats.get(), timeout)
    finally:
        await sub.unsubscribe()
