"""An instance that dies: CRASHED with its log tail, UNAVAILABLE answers, in-flight requests too."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path
from typing import Any

from envhost_testkit import EnvHostProcess, lifecycle_events, new_session_id, start_session, stop_session
from platform_contracts import subjects
from simulusion.bus.v1 import events_pb2 as bus_pb
from simulusion.control.v1 import control_pb2 as control_pb
from simulusion.env.v1 import environment_pb2 as env_pb

SLEEPY_ENV = '''
import time
import gymnasium as gym
import numpy as np


class Sleepy(gym.Env):
    observation_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(1, np.float32), {}

    def step(self, action):
        print("sleepy step started", flush=True)
        time.sleep(60)
        return np.zeros(1, np.float32), 0.0, False, False, {}


def make(**kwargs):
    return Sleepy()
'''


async def test_killed_instance_is_crashed_and_answers_unavailable(envhost: EnvHostProcess, nats_client: Any,
                                                                 js: Any, open_stream: Any) -> None:
    session_id = new_session_id()
    await start_session(nats_client, envhost.host_id, session_id, record=True)
    stream = open_stream(envhost.address, session_id)
    await stream.reset(seed=1)
    await stream.step(0)

    os.kill(envhost.instance_pid(session_id), signal.SIGKILL)
    _, crashed = await lifecycle_events(js, session_id, 2)
    assert crashed.kind == bus_pb.SESSION_EVENT_KIND_CRASHED
    assert crashed.host_id == envhost.host_id and crashed.last_seq == 2
    assert f"session {session_id} (cartpole) died with exit code -9" in crashed.reason
    assert "READY unix:" in crashed.log_tail  # the instance's own log

    response = await stream.step(1)
    assert response.id == 3
    assert response.error.code == env_pb.ERROR_CODE_UNAVAILABLE
    assert response.error.message == (f"environment instance of session {session_id} (cartpole) "
                                      "died with exit code -9")
    assert response.error.log_tail == crashed.log_tail

    msg = await nats_client.request(subjects.envhost_list(envhost.host_id),
                                    control_pb.ListInstancesRequest().SerializeToString(), timeout=10)
    listed = {i.session_id: i for i in control_pb.ListInstancesReply.FromString(msg.data).instances}
    assert not listed[session_id].alive and listed[session_id].log_tail == crashed.log_tail
    assert (await stop_session(nats_client, envhost.host_id, session_id)).stopped  # clears it, no CLOSED
    await asyncio.sleep(0.3)
    assert await lifecycle_events(js, session_id, 2) and (
        await js.stream_info(subjects.SESSIONS_STREAM, subjects_filter=subjects.session_lifecycle(session_id))
    ).state.subjects == {subjects.session_lifecycle(session_id): 2}


async def test_request_in_flight_when_the_instance_dies_is_answered(envhost: EnvHostProcess, nats_client: Any,
                                                                    tmp_path: Path, open_stream: Any) -> None:
    (tmp_path / "sleepy_env.py").write_text(SLEEPY_ENV)
    entry = control_pb.CatalogEntry(id="sleepy", factory="sleepy_env:make", path=str(tmp_path))
    session_id = new_session_id()
    reply = await start_session(nats_client, envhost.host_id, session_id, entry=entry)
    assert not reply.HasField("error"), reply.error
    stream = open_stream(envhost.address, session_id)
    await stream.reset()

    in_flight = asyncio.create_task(stream.step(1, timeout=20))
    log = envhost.run_dir / envhost.host_id / f"{session_id}.log"
    deadline = time.monotonic() + 10
    while "sleepy step started" not in log.read_text() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    os.kill(envhost.instance_pid(session_id), signal.SIGKILL)
    started = time.monotonic()
    response = await in_flight
    assert time.monotonic() - started < 10
    assert response.error.code == env_pb.ERROR_CODE_UNAVAILABLE
    assert "(sleepy) died with exit code -9" in response.error.message
    assert "sleepy step started" in response.error.log_tail
