"""Warm pools across services (PLATFORM_POOLS), and vector sessions' num_envs from the broker to the
environment server."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import httpx
import nats
import platform_sdk
from platform_contracts import subjects
from platform_testing.platform import PlatformStack, running_platform
from platform_testing.waiting import instance_pids, wait_for
from simulusion.control.v1 import control_pb2
from simulusion.session.v1.options_pb2 import SessionOptions

WARM_LINE = re.compile(r"pool cartpole: (pool-cartpole-[0-9a-f]+) warm on env host \S+ \(2/2\)")


def pool_pids(stack: PlatformStack) -> set[int]:
    """Environment servers started for this platform's pool (their command line names the pool
    slot; only this platform's processes: other platforms on the machine may pool cartpole too)."""
    return set(instance_pids("pool-cartpole-")) & set(stack.tree())


def full_pool_reports(stack: PlatformStack) -> int:
    """How many times the broker said the cartpole pool was full (2/2)."""
    return len(WARM_LINE.findall(stack.log("broker")))


def claimed_pid(stack: PlatformStack, session_id: str) -> int | None:
    match = re.search(rf"session {session_id} \(cartpole\) claimed pool instance pool-cartpole-[0-9a-f]+ "
                      rf"\(pid (\d+)\)", stack.log("envhost"))
    return int(match.group(1)) if match else None


def session_ids(stack: PlatformStack) -> list[str]:
    return [s["id"] for s in httpx.get(f"{stack.url}/v0/sessions", timeout=10).json()["data"]]


def alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


def test_a_warm_pool_serves_a_new_session_and_refills(tmp_path):
    with running_platform(tmp_path, extra_env={"PLATFORM_POOLS": "cartpole=2"}) as stack:
        wait_for(lambda: full_pool_reports(stack) >= 1, timeout=60, what="the pool to be warm")
        warm = pool_pids(stack)
        assert len(warm) == 2, warm

        started = time.monotonic()
        env = platform_sdk.connect("cartpole", url=stack.url, record=True)
        pooled_create_s = time.monotonic() - started
        sid = env.session_id
        pid = wait_for(lambda: claimed_pid(stack, sid), timeout=10, what="the env host's claim line")
        assert pid in warm  # the session runs in a process that was already warm
        assert instance_pids(sid) == []  # no process was started for it
        assert list(Path(stack.data_dir, "envhost").glob(f"*/{sid}.log"))  # its log carries its name now
        observation, _ = env.reset(seed=0)
        assert observation.shape == (4,)
        env.step(1)

        wait_for(lambda: full_pool_reports(stack) >= 2, timeout=60, what="the pool to refill to 2")
        assert len(pool_pids(stack)) == 3 and warm <= pool_pids(stack)  # two warm and the claimed one
        assert session_ids(stack) == [sid]  # pool instances are not sessions

        started = time.monotonic()
        with platform_sdk.connect("cartpole", url=stack.url, kwargs={"max_episode_steps": 5}) as other:
            own_create_s = time.monotonic() - started
            assert instance_pids(other.session_id)  # other settings: a process of its own
            assert claimed_pid(stack, other.session_id) is None
            other.reset(seed=1)
        print(f"create with a warm pool: {pooled_create_s * 1000:.0f} ms; own process: {own_create_s * 1000:.0f} ms")

        env.close()
        wait_for(lambda: not alive(pid), timeout=15, what="the claimed instance to stop with its session")
        assert len(pool_pids(stack)) == 2


async def _create(nats_url: str, num_envs: int) -> control_pb2.SessionReply:
    nc = await nats.connect(nats_url)
    try:
        request = control_pb2.CreateSessionRequest(options=SessionOptions(env_id="cartpole", num_envs=num_envs))
        msg = await nc.request(subjects.BROKER_CREATE_SESSION, request.SerializeToString(), timeout=60)
        reply = control_pb2.SessionReply.FromString(msg.data)
        if reply.session.id and not reply.error.code:
            close = control_pb2.CloseSessionRequest(session_id=reply.session.id, reason="test done")
            await nc.request(subjects.BROKER_CLOSE_SESSION, close.SerializeToString(), timeout=30)
        return reply
    finally:
        await nc.drain()


def test_num_envs_reaches_the_environment_server(tmp_path):
    with running_platform(tmp_path, extra_env={"PLATFORM_POOLS": "cartpole=1"}) as stack:
        vector = asyncio.run(_create(stack.nats_url, 3))
        assert not vector.error.code, vector.error
        assert vector.session.spec.num_envs == 3 and vector.session.spec.action_space.discrete.n == 2
        assert claimed_pid(stack, vector.session.id) is None  # a vector session never takes a pool instance
        too_many = asyncio.run(_create(stack.nats_url, 257))
        assert too_many.error.code == "invalid_argument" and "256" in too_many.error.message
