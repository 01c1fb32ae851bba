"""`GrpcConnection`: lockstep calls to a real environment server; a dead or silent server
fails the call within its timeout instead of hanging."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest
from platform_sdk.check.connection import ConnectionFailed, GrpcConnection
from platform_sdk.launch.instance_launch import LaunchSpec, launch_instance
from simulusion.env.v1 import environment_pb2 as env_pb

BYO_EXAMPLE = Path(__file__).resolve().parents[2] / "envs" / "byo-example"

SLOW = """
import time
import sys
sys.path.insert(0, {byo!r})
from reacher2d import PointReacherEnv


class Slow(PointReacherEnv):
    def reset(self, **kwargs):
        time.sleep(30)
        return super().reset(**kwargs)


def make_env(render_mode=None):
    return Slow(render_mode=render_mode)
"""


async def test_calls_answer_in_order_and_a_killed_server_fails_the_next_call(tmp_path):
    instance = await launch_instance(LaunchSpec(factory="reacher2d:make_env", path=str(BYO_EXAMPLE)), tmp_path, "c1")
    connection = GrpcConnection(instance.address, call_timeout=20)
    try:
        spec = await asyncio.to_thread(connection.call, env_pb.EnvRequest(id=1, spec=env_pb.SpecRequest()))
        assert spec.id == 1 and spec.spec.env_id == "reacher2d:make_env"
        reset = await asyncio.to_thread(connection.call, env_pb.EnvRequest(id=2, reset=env_pb.ResetRequest(seed=3)))
        assert reset.id == 2 and len(reset.reset.observation.tensor.data) == 6 * 4
        os.kill(instance.pid, signal.SIGKILL)
        await instance.wait()
        started = time.monotonic()
        with pytest.raises(ConnectionFailed):
            await asyncio.to_thread(connection.call, env_pb.EnvRequest(id=3, render=env_pb.RenderRequest()))
        assert time.monotonic() - started < 15
    finally:
        connection.close()
        await instance.stop()


async def test_a_silent_server_fails_the_call_after_its_timeout(tmp_path):
    (tmp_path / "slow_env.py").write_text(SLOW.format(byo=str(BYO_EXAMPLE)))
    instance = await launch_instance(LaunchSpec(factory="slow_env:make_env", path=str(tmp_path)), tmp_path, "c2")
    connection = GrpcConnection(instance.address, call_timeout=1.0)
    try:
        with pytest.raises(ConnectionFailed, match=r"no response from .* within 1 s"):
            await asyncio.to_thread(connection.call, env_pb.EnvRequest(id=1, reset=env_pb.ResetRequest()))
        with pytest.raises(ConnectionFailed, match="within 1 s"):  # the stream stays failed
            await asyncio.to_thread(connection.call, env_pb.EnvRequest(id=2, spec=env_pb.SpecRequest()))
    finally:
        connection.close()
        await instance.stop(timeout=1.0)  # it is still asleep in reset: killed
