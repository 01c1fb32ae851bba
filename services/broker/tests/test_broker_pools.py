"""Warm pools: PLATFORM_POOLS, filling, claiming, the fallback to a normal start, refilling."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys

import pytest
from platform_broker.catalog import load_catalog
from platform_broker.errors import ConfigError
from platform_broker.pools import check_pool_envs, parse_pools
from platform_broker.reconcile import POOL_REASON
from platform_contracts import subjects
from platform_testing.ports import free_port
from simulusion.control.v1 import control_pb2
from simulusion.session.v1.options_pb2 import SessionOptions

SLOT_ID = re.compile(r"^pool-cartpole-[0-9a-f]{8}$")


async def create(ask, env_id: str = "cartpole", **fields):
    request = control_pb2.CreateSessionRequest(options=SessionOptions(env_id=env_id, **fields))
    return await ask(subjects.BROKER_CREATE_SESSION, request, control_pb2.SessionReply)


async def list_ids(ask) -> list[str]:
    reply = await ask(subjects.BROKER_LIST_SESSIONS, control_pb2.ListSessionsRequest(include_closed=True),
                      control_pb2.ListSessionsReply)
    return [session.id for session in reply.sessions]


def pooled_starts(host) -> list[control_pb2.StartInstanceRequest]:
    return [start for start in host.starts if start.pooled]


def test_pools_parse_from_the_setting():
    assert parse_pools("") == {}
    assert parse_pools("cartpole=2,pong=1") == {"cartpole": 2, "pong": 1}
    assert parse_pools(" cartpole = 2 , , pendulum=0,") == {"cartpole": 2}  # 0: no pool


@pytest.mark.parametrize(("text", "named"), [
    ("cartpole", "'cartpole'"),
    ("cartpole=2,pong", "'pong'"),
    ("cartpole=two", "'cartpole=two'"),
    ("=2", "'=2'"),
    ("cartpole=-1", "'cartpole=-1'"),
    ("cart pole=1", "'cart pole=1'"),
    ("cartpole=65", "at most 64"),
    ("cartpole=1,cartpole=2", "'cartpole' is given twice"),
])
def test_a_malformed_pool_setting_names_the_bad_part(text, named):
    with pytest.raises(ConfigError) as info:
        parse_pools(text)
    assert str(info.value).startswith("PLATFORM_POOLS: ") and named in str(info.value)
    assert "\n" not in str(info.value)


def test_pools_of_unknown_environments_are_refused():
    catalog = load_catalog(None)
    check_pool_envs({"cartpole": 2, "pendulum": 1}, catalog)
    with pytest.raises(ConfigError, match="unknown environment 'cartpol'; known: cartpole"):
        check_pool_envs({"cartpole": 1, "cartpol": 1}, catalog)


@pytest.mark.parametrize(("pools", "named"), [("cartpole=2,pong:1", "'pong:1'"),
                                              ("nosuchenv=1", "unknown environment 'nosuchenv'")])
def test_the_broker_exits_at_start_on_a_bad_pool_setting(tmp_path, pools, named):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLATFORM_")}
    env.update(PLATFORM_POOLS=pools, PLATFORM_NATS_URL=f"nats://127.0.0.1:{free_port()}",
               PLATFORM_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/platform.db")
    result = subprocess.run([sys.executable, "-m", "platform_broker"], env=env, cwd=tmp_path, capture_output=True,
                            text=True, timeout=60, check=False)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "PLATFORM_POOLS" in lines[0] and named in lines[0], result.stderr


async def test_pools_fill_with_warm_instances_that_are_not_sessions(broker, envhost, ask, eventually):
    host = await envhost(capacity=6)
    await broker(pools={"cartpole": 2, "pendulum": 1}, idle_timeout=0.5)

    async def filled() -> bool:
        return len(pooled_starts(host)) == 3 and len(host.pooled) == 3
    await eventually(filled, 10, "the pools to fill")
    cartpole = [start for start in pooled_starts(host) if start.entry.id == "cartpole"]
    assert len(cartpole) == 2 and all(SLOT_ID.match(start.session_id) for start in cartpole)
    for start in pooled_starts(host):
        assert start.options == SessionOptions(env_id=start.entry.id, kwargs_json="{}", num_envs=1)  # the defaults
    assert await list_ids(ask) == []  # not sessions
    await asyncio.sleep(1.5)  # idle checks pass by (timeout 0.5 s)
    assert host.stops == [] and len(host.pooled) == 3
    assert len(pooled_starts(host)) == 3  # full pools start nothing more


async def test_a_default_create_claims_a_warm_instance_and_the_pool_refills(broker, envhost, ask, eventually):
    host = await envhost(address="10.0.0.9:7100", step_address="10.0.0.9:7200")
    await broker(pools={"cartpole": 2})

    async def warm(count: int) -> bool:
        return len(host.pooled) == count
    await eventually(lambda: warm(2), 10, "the pool to fill")
    slots = set(host.pooled)

    # The web app's sessions close with their page: when the gateway closes one, not how it runs.
    reply = await create(ask, "cartpole", record=True, record_frames=True, auto_reset=True, closes_with_page=True)
    assert not reply.error.code, reply.error
    session = reply.session
    assert session.state == control_pb2.SESSION_STATE_RUNNING and session.spec.env_id == "CartPole-v1"
    assert (session.host_id, session.host_address, session.step_address) == (
        host.host_id, "10.0.0.9:7100", "10.0.0.9:7200")
    [claim] = host.claims
    assert claim.pool_slot in slots and claim.session_id == session.id
    assert claim.options == session.options  # the session's options, whole
    assert claim.options.record and claim.options.record_frames and claim.options.auto_reset
    assert session.id not in [start.session_id for start in host.starts]  # no process was started for it
    assert session.id in host.instances

    await eventually(lambda: warm(2), 10, "the pool to refill")
    assert len(pooled_starts(host)) == 3 and claim.pool_slot not in host.pooled
    assert await list_ids(ask) == [session.id]


@pytest.mark.parametrize("fields", [{"kwargs_json": '{"max_episode_steps": 9}'}, {"jpeg_quality": 50},
                                    {"num_envs": 4}, {"preview": True}])
async def test_creates_with_other_settings_start_their_own_instance(broker, envhost, ask, eventually, fields):
    host = await envhost()
    await broker(pools={"cartpole": 1})

    async def filled() -> bool:
        return len(host.pooled) == 1
    await eventually(filled, 10, "the pool to fill")
    reply = await create(ask, "cartpole", **fields)
    assert not reply.error.code, reply.error
    assert host.claims == []
    [start] = [start for start in host.starts if start.session_id == reply.session.id]
    assert not start.pooled and start.options.num_envs == fields.get("num_envs", 1)
    assert len(host.pooled) == 1


async def test_a_failed_claim_falls_back_to_a_normal_start(broker, envhost, ask, eventually):
    host = await envhost()
    service = await broker(pools={"cartpole": 1})

    async def filled() -> bool:
        return len(service.pools.warm("cartpole")) == 1
    await eventually(filled, 10, "the pool to fill")
    [slot] = service.pools.warm("cartpole")
    host.pooled.pop(slot.slot_id)  # the env host lost it, the broker has not heard yet

    reply = await create(ask, "cartpole")
    assert not reply.error.code, reply.error
    assert reply.session.state == control_pb2.SESSION_STATE_RUNNING and reply.session.host_id == host.host_id
    assert [claim.pool_slot for claim in host.claims] == [slot.slot_id]
    [start] = [start for start in host.starts if start.session_id == reply.session.id]
    assert not start.pooled


async def test_a_failed_claim_with_no_room_left_closes_the_session(broker, envhost, ask, eventually):
    host = await envhost(capacity=1)
    service = await broker(pools={"cartpole": 1})

    async def filled() -> bool:
        return len(service.pools.warm("cartpole")) == 1
    await eventually(filled, 10, "the pool to fill")
    host.pooled.clear()  # the claim fails, and the host is full

    reply = await create(ask, "cartpole")
    assert reply.error.code == "unavailable" and "full" in reply.error.message
    [session] = (await ask(subjects.BROKER_LIST_SESSIONS, control_pb2.ListSessionsRequest(include_closed=True),
                           control_pb2.ListSessionsReply)).sessions
    assert session.state == control_pb2.SESSION_STATE_CLOSED and "start failed" in session.reason


async def test_a_pool_instance_that_dies_is_replaced(broker, envhost, eventually):
    host = await envhost()
    service = await broker(pools={"cartpole": 1})

    async def filled() -> bool:
        return len(service.pools.warm("cartpole")) == 1
    await eventually(filled, 10, "the pool to fill")
    [first] = service.pools.warm("cartpole")
    host.instances.pop(first.slot_id)  # gone from its heartbeats
    host.pooled.pop(first.slot_id)

    async def replaced() -> bool:
        return [slot.slot_id for slot in service.pools.warm("cartpole")] not in ([], [first.slot_id])
    await eventually(replaced, 10, "a new warm instance")
    assert len(pooled_starts(host)) == 2


async def test_pools_go_to_the_host_with_most_room(broker, envhost, eventually):
    small = await envhost("small", capacity=2)
    big = await envhost("big", capacity=5)
    service = await broker(pools={"cartpole": 1})

    async def filled() -> bool:
        return len(service.pools.warm("cartpole")) == 1
    await eventually(filled, 10, "the pool to fill")
    assert len(pooled_starts(big)) == 1 and pooled_starts(small) == []


async def test_pool_instances_of_an_earlier_broker_are_stopped_and_the_pool_refilled(broker, envhost, eventually):
    host = await envhost()
    host.add_instance("pool-cartpole-0badc0de")
    host.pooled["pool-cartpole-0badc0de"] = load_catalog(None).get("cartpole")
    service = await broker(pools={"cartpole": 1})

    report = service.reconcile_report
    assert report is not None and report.pool_stopped == ["pool-cartpole-0badc0de"] and report.stopped == []
    assert [(stop.session_id, stop.reason) for stop in host.stops] == [("pool-cartpole-0badc0de", POOL_REASON)]

    async def filled() -> bool:
        return len(service.pools.warm("cartpole")) == 1
    await eventually(filled, 10, "the pool to refill")
