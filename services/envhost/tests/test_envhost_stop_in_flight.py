"""A stop while a step is in flight (a step that takes a minute inside native code, deaf to
SIGTERM): the stop does not wait for the step; the instance is gone, the session's CLOSED is
published, and the step's client is answered "closed"."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

from envhost_testkit import EnvHostProcess, lifecycle_events, new_session_id, start_session, stop_session
from simulusion.bus.v1 import events_pb2 as bus_pb
from simulusion.control.v1 import control_pb2 as control_pb
from simulusion.env.v1 import environment_pb2 as env_pb

# SIGTERM is blocked during the step, as it is in effect while a native call (MuJoCo's substeps)
# runs: Python's handler runs only once the call returns.
NATIVE_SLOW_ENV = '''
import signal
import time
import gymnasium as gym
import numpy as np


class NativeSlow(gym.Env):
    observation_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(1, np.float32), {}

    def step(self, action):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        print("slow step started", flush=True)
        time.sleep(60)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        return np.zeros(1, np.float32), 0.0, False, False, {}


def make(**kwargs):
    return NativeSlow()
'''


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").exists() and Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


async def test_a_stop_abandons_the_step_in_flight_and_its_client_hears_closed(
        envhost: EnvHostProcess, nats_client: Any, js: Any, tmp_path: Path, open_stream: Any) -> None:
    (tmp_path / "native_slow_env.py").write_text(NATIVE_SLOW_ENV)
    entry = control_pb.CatalogEntry(id="native-slow", factory="native_slow_env:make", path=str(tmp_path))
    session_id = new_session_id()
    reply = await start_session(nats_client, envhost.host_id, session_id, entry=entry)
    assert not reply.HasField("error"), reply.error
    stream = open_stream(envhost.address, session_id)
    await stream.reset()
    pid = envhost.instance_pid(session_id)

    in_flight = asyncio.create_task(stream.step(1, timeout=50))
    log = envhost.run_dir / envhost.host_id / f"{session_id}.log"
    deadline = time.monotonic() + 20
    while "slow step started" not in log.read_text() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert "slow step started" in log.read_text()

    stopped = await stop_session(nats_client, envhost.host_id, session_id, reason="closed by the client")
    assert stopped.stopped and not stopped.HasField("error")
    assert not in_flight.done() or in_flight.result().HasField("error")  # the step never finished
    assert not _alive(pid), "the instance is gone once the stop is answered"

    response = await in_flight
    assert response.error.code == env_pb.ERROR_CODE_SESSION_CLOSED
    assert response.error.message == f"session {session_id} (native-slow) was closed"
    started, closed = await lifecycle_events(js, session_id, 2)
    assert started.kind == bus_pb.SESSION_EVENT_KIND_STARTED
    assert closed.kind == bus_pb.SESSION_EVENT_KIND_CLOSED and closed.reason == "closed by the client"
