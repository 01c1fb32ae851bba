"""The env host's link to an instance (`platform_envhost.instance_link`): frames to the
instances it starts itself, the gRPC stream to a container-style one; real server processes."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from platform_envhost.errors import InstanceGone
from platform_envhost.instance_link import FramedLink, GrpcLink, open_link
from platform_envhost.session_instance import Instance
from platform_sdk.launch.instance_launch import InstanceProcess, LaunchSpec, launch_instance
from platform_sdk.launch.instance_processes import wait_ready
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb
from simulusion.session.v1.options_pb2 import SessionOptions

SLOW_ENV = '''
import time

import gymnasium


class Slow(gymnasium.Wrapper):
    """CartPole whose step takes `delay` seconds."""

    def __init__(self, delay):
        super().__init__(gymnasium.make("CartPole-v1"))
        self.delay = delay

    def step(self, action):
        time.sleep(self.delay)
        return self.env.step(action)


def make(delay=0.0):
    return Slow(delay)
'''


def _describe() -> str:
    return "session s1 (cartpole)"


def _request(request_id: int, **command: object) -> bytes:
    return env_pb.EnvRequest(id=request_id, **command).SerializeToString()  # type: ignore[arg-type]


def _step(request_id: int, action: int = 0) -> bytes:
    return _request(request_id, step=env_pb.StepRequest(action=pb.Value(discrete=action)))


async def _answer(link: FramedLink | GrpcLink, raw: bytes) -> env_pb.EnvResponse:
    response = env_pb.EnvResponse.FromString(await link.forward(raw))
    assert response.id == env_pb.EnvRequest.FromString(raw).id
    return response


@pytest.fixture
async def slow_instance(tmp_path: Path) -> AsyncIterator[InstanceProcess]:
    """A frames instance whose steps take 1 s (requests in flight long enough to interrupt)."""
    (tmp_path / "slow_env.py").write_text(textwrap.dedent(SLOW_ENV))
    spec = LaunchSpec(factory="slow_env:make", path=str(tmp_path), kwargs={"delay": 1.0})
    instance = await launch_instance(spec, tmp_path / "run", "slow", transport="frames")
    yield instance
    await instance.stop()


async def test_the_framed_link_forwards_requests_in_order(tmp_path: Path) -> None:
    process = await launch_instance(LaunchSpec(gymnasium_id="CartPole-v1"), tmp_path, "s1", transport="frames")
    try:
        link = open_link(process, _describe)
        assert isinstance(link, FramedLink)
        assert (await _answer(link, _request(1, spec=env_pb.SpecRequest()))).spec.env_id == "CartPole-v1"
        assert (await _answer(link, _request(2, reset=env_pb.ResetRequest(seed=3)))).HasField("reset")
        for request_id in range(3, 40):
            assert (await _answer(link, _step(request_id, request_id % 2))).HasField("step")
        big = await _answer(link, _request(40, import_state=env_pb.ImportStateRequest(state=os.urandom(200_000))))
        assert big.HasField("error")  # a request larger than one write, answered
        assert (await _answer(link, _request(41, close=env_pb.CloseRequest()))).HasField("close")
        await link.close()
        with pytest.raises(InstanceGone, match=r"the stream to the instance of session s1 \(cartpole\) broke"):
            await link.forward(_step(42))
        await link.close()  # idempotent
    finally:
        await process.stop()


async def test_the_instance_dying_mid_request_raises_instance_gone(slow_instance: InstanceProcess) -> None:
    link = open_link(slow_instance, _describe)
    await _answer(link, _request(1, reset=env_pb.ResetRequest(seed=0)))
    pending = asyncio.ensure_future(link.forward(_step(2)))
    await asyncio.sleep(0.3)  # the step is in the instance now
    os.kill(slow_instance.pid, signal.SIGKILL)
    with pytest.raises(InstanceGone, match=r"^the stream to the instance of session s1 \(cartpole\) broke: "):
        await asyncio.wait_for(pending, 10)
    with pytest.raises(InstanceGone, match="broke"):  # and stays broken
        await link.forward(_step(3))
    await link.close()


async def test_close_fails_the_request_in_flight_as_today(slow_instance: InstanceProcess) -> None:
    link = open_link(slow_instance, _describe)
    await _answer(link, _request(1, reset=env_pb.ResetRequest(seed=0)))
    pending = asyncio.ensure_future(link.forward(_step(2)))
    await asyncio.sleep(0.3)
    await link.close()  # what stopping an instance does to a request still in flight
    with pytest.raises(InstanceGone, match=r"the stream to the instance of session s1 \(cartpole\) was cancelled"):
        await pending


async def test_a_cancelled_caller_does_not_take_the_next_answer(slow_instance: InstanceProcess) -> None:
    link = open_link(slow_instance, _describe)
    await _answer(link, _request(1, reset=env_pb.ResetRequest(seed=0)))
    pending = asyncio.ensure_future(link.forward(_step(2)))
    await asyncio.sleep(0.3)
    pending.cancel()  # the caller is cancelled: CancelledError, not InstanceGone
    with pytest.raises(asyncio.CancelledError):
        await pending
    # the step's answer still comes; it is dropped, and the spec gets its own answer
    assert (await _answer(link, _request(3, spec=env_pb.SpecRequest()))).HasField("spec")
    await link.close()


async def test_a_refused_connection_raises_instance_gone(tmp_path: Path) -> None:
    link = FramedLink(f"unix:{tmp_path}/nobody.sock", _describe)
    with pytest.raises(InstanceGone, match=r"session s1 \(cartpole\) broke: cannot connect to unix:.*nobody.sock"):
        await link.forward(_step(1))
    await link.close()


async def test_a_container_style_grpc_instance_still_works(tmp_path: Path) -> None:
    """An image's server: gRPC on a local TCP port (as `containers.launch_container` reaches it)."""
    log_path = tmp_path / "c1.log"
    with open(log_path, "wb") as log:  # noqa: ASYNC230 - a local file, created once
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "platform_sdk", "--gym-id", "CartPole-v1", "--listen", "127.0.0.1:0",
            stdin=asyncio.subprocess.DEVNULL, stdout=log, stderr=log,
        )
    process = InstanceProcess(child, "", log_path, tmp_path / "c1.no-socket", None, transport="grpc")
    try:
        process.address = await wait_ready(process, 60)
        assert not process.address.startswith("unix:")
        instance = Instance("s1", SessionOptions(env_id="cartpole"), "{}", process)
        assert isinstance(instance._link, GrpcLink)
        assert (await instance.request_spec()).env_id == "CartPole-v1"
        async with instance.lock:
            raw = await instance.forward(_request(5, reset=env_pb.ResetRequest(seed=1)))
        assert env_pb.EnvResponse.FromString(raw).id == 5
        await instance.close_stream()
        async with instance.lock:
            with pytest.raises(InstanceGone, match=r"the stream to the instance of session s1 \(cartpole\)"):
                await instance.forward(_step(6))
    finally:
        await process.stop()


UVLOOP_LINK = """
import sys
from pathlib import Path

import uvloop
from platform_envhost.session_instance import Instance
from platform_sdk.launch.instance_launch import LaunchSpec, launch_instance
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.session.v1.options_pb2 import SessionOptions


async def run() -> None:
    process = await launch_instance(LaunchSpec(gymnasium_id="CartPole-v1"), Path(sys.argv[1]), "uv", transport="frames")
    try:
        instance = Instance("s1", SessionOptions(env_id="cartpole"), "{}", process)
        assert (await instance.request_spec()).action_space.discrete.n == 2
        async with instance.lock:
            raw = await instance.forward(env_pb.EnvRequest(id=2, reset=env_pb.ResetRequest(seed=0)).SerializeToString())
        assert env_pb.EnvResponse.FromString(raw).HasField("reset")
        await instance.close_stream()
    finally:
        await process.stop()
    print("framed link under uvloop: ok")


uvloop.run(run())
"""


def test_the_framed_link_under_uvloop(tmp_path: Path) -> None:
    """The env host runs on uvloop, whose transports are not asyncio's classes. In a process of
    its own, as the env host runs."""
    done = subprocess.run([sys.executable, "-c", UVLOOP_LINK, str(tmp_path)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "framed link under uvloop: ok" in done.stdout


UVLOOP_SPAWNS = """
import asyncio, os, sys, threading, time
import uvloop
from platform_sdk.launch.child_process import DEVNULL, PIPE, STDOUT, start_child

stop = threading.Event()
busy = [threading.Thread(target=lambda: [time.sleep(0.0005) for _ in iter(stop.is_set, True)], daemon=True)
        for _ in range(4)]  # threads running while the children are forked, as gRPC's are in the env host


async def one(i):
    child = await start_child([sys.executable, "-c", f"print({i})"], stdin=DEVNULL, stdout=PIPE, stderr=STDOUT,
                              env=os.environ)
    out = await child.stdout.read()
    assert await child.wait() == 0 and out.strip() == str(i).encode(), (i, out)


async def run():
    for thread in busy:
        thread.start()
    for start in range(0, 60, 6):
        await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(start, start + 6))), 60)
    stop.set()
    print("60 children under uvloop: ok")


uvloop.run(run())
"""


def test_children_spawned_under_uvloop_with_threads_running_all_start() -> None:
    """uvloop's own spawn runs Python's at-fork hooks in the forked child (MagicStack/uvloop#749);
    with other threads running, such a child twice spun in `threading._after_fork` in CI and never
    reached exec. The launcher's `start_child` runs no Python in the child; this checks that it
    works under uvloop with threads running (the hang itself does not come on demand: 1,800
    uvloop spawns here did not show it)."""
    done = subprocess.run([sys.executable, "-c", UVLOOP_SPAWNS], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "60 children under uvloop: ok" in done.stdout

