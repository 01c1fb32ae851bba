"""`python -m platform_envhost` as a process: start-up errors, heartbeats, clean shutdown."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from envhost_testkit import events_until_closed, lifecycle_events, new_session_id, start_session
from platform_contracts import subjects
from platform_testing.ports import free_port
from simulusion.bus.v1 import events_pb2 as bus_pb
from simulusion.control.v1 import control_pb2 as control_pb


def _run_envhost(timeout: float = 20, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "platform_envhost"], env=dict(os.environ, **env), check=False,
                          capture_output=True, text=True, timeout=timeout)


def test_unreachable_nats_exits_with_one_line() -> None:
    # gives up rather than retrying forever: a hang ends in _run_envhost's TimeoutExpired
    result = _run_envhost(PLATFORM_NATS_URL=f"nats://127.0.0.1:{free_port()}")
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("platform_envhost: error: cannot connect to NATS at nats://127.0.0.1:")


@pytest.mark.parametrize(("name", "value"), [("PLATFORM_ENVHOST_ID", "a.b"), ("PLATFORM_ENVHOST_CAPACITY", "0"),
                                             ("PLATFORM_ENVHOST_LISTEN", "nowhere"),
                                             ("PLATFORM_ENVHOST_STEP_LISTEN", "nowhere:x")])
def test_bad_settings_exit_with_one_line_naming_the_setting(name: str, value: str) -> None:
    result = _run_envhost(**{name: value})
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert name in result.stderr


def test_a_busy_step_link_port_exits_with_one_line(nats_server: Any, tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        address = f"127.0.0.1:{busy.getsockname()[1]}"
        result = _run_envhost(PLATFORM_NATS_URL=nats_server.url, PLATFORM_ENVHOST_STEP_LISTEN=address,
                              PLATFORM_ENVHOST_RUN_DIR=str(tmp_path))
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"platform_envhost: error: cannot listen on PLATFORM_ENVHOST_STEP_LISTEN={address}: ")


async def test_heartbeat_reports_address_capacity_and_activity(envhost_factory: Any, nats_client: Any,
                                                               open_stream: Any) -> None:
    host = envhost_factory(capacity=3, PLATFORM_ENVHOST_HEARTBEAT_INTERVAL="0.2")
    beats: asyncio.Queue[control_pb.HostHeartbeat] = asyncio.Queue()

    async def on_beat(msg: Any) -> None:
        beat = control_pb.HostHeartbeat.FromString(msg.data)
        if beat.host_id == host.host_id:
            beats.put_nowait(beat)

    sub = await nats_client.subscribe(subjects.ENVHOST_HEARTBEAT, cb=on_beat)
    try:
        beat = await asyncio.wait_for(beats.get(), 5)
        assert (beat.address, beat.capacity, beat.running) == (host.address, 3, 0)
        first_started_at = beat.started_at
        session_id = new_session_id()
        await start_session(nats_client, host.host_id, session_id)
        stream = open_stream(host.address, session_id)
        before_step = time.time()
        await stream.reset()
        while (beat := await asyncio.wait_for(beats.get(), 5)).time < before_step + 0.01:
            pass
        assert beat.running == 1
        [info] = beat.instances
        assert info.session_id == session_id and info.alive
        assert before_step <= info.last_active_at <= beat.time
        assert 0 < first_started_at == beat.started_at < before_step, "the process's start, the same in every beat"
    finally:
        await sub.unsubscribe()


async def test_sigterm_stops_instances_and_flushes_events(envhost_factory: Any, nats_client: Any, js: Any,
                                                          open_stream: Any) -> None:
    host = envhost_factory()
    session_id = new_session_id()
    await start_session(nats_client, host.host_id, session_id, record=True)
    pid = host.instance_pid(session_id)
    stream = open_stream(host.address, session_id)
    await stream.reset(seed=0)
    for _ in range(5):
        await stream.step(1)

    assert await asyncio.to_thread(host.stop) == 0
    _, closed = await lifecycle_events(js, session_id, 2)
    assert closed.kind == bus_pb.SESSION_EVENT_KIND_CLOSED
    assert closed.reason == "env host stopped" and closed.last_seq == 6
    assert [e.seq for e in await events_until_closed(js, session_id)] == list(range(1, 7))
    assert not os.path.exists(f"/proc/{pid}")
    assert "Traceback" not in host.log()
