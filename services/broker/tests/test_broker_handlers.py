"""The broker's request handlers, in-process, against a real nats-server and a stand-in env host."""

from __future__ import annotations

import json
import re
import time

from platform_broker.store import RUNNING
from platform_contracts import subjects
from simulusion.bus.v1 import events_pb2
from simulusion.control.v1 import control_pb2
from simulusion.session.v1.options_pb2 import SessionOptions

SESSION_ID = re.compile(r"^s-[0-9a-f]{12}$")


async def create(ask, env_id: str = "cartpole", kwargs_json: str = "", record: bool = False, **options):
    request = control_pb2.CreateSessionRequest(options=SessionOptions(env_id=env_id, kwargs_json=kwargs_json,
                                                                      record=record, **options))
    return await ask(subjects.BROKER_CREATE_SESSION, request, control_pb2.SessionReply)


async def get(ask, session_id: str):
    return await ask(subjects.BROKER_GET_SESSION, control_pb2.GetSessionRequest(session_id=session_id),
                     control_pb2.SessionReply)


async def list_ids(ask, include_closed: bool = False) -> list[str]:
    reply = await ask(subjects.BROKER_LIST_SESSIONS, control_pb2.ListSessionsRequest(include_closed=include_closed),
                      control_pb2.ListSessionsReply)
    assert not reply.error.code
    return [session.id for session in reply.sessions]


async def close(ask, session_id: str, reason: str = ""):
    return await ask(subjects.BROKER_CLOSE_SESSION,
                     control_pb2.CloseSessionRequest(session_id=session_id, reason=reason), control_pb2.SessionReply)


async def test_create_get_list_close(broker, envhost, ask):
    host = await envhost(address="10.0.0.7:7100")
    await broker()

    before = time.time()
    reply = await create(ask, "cartpole", '{"max_episode_steps": 50}', record=True)
    assert not reply.error.code, reply.error
    session = reply.session
    assert SESSION_ID.match(session.id)
    assert session.state == control_pb2.SESSION_STATE_RUNNING
    assert (session.options.env_id, session.host_id, session.host_address) == ("cartpole", host.host_id,
                                                                                "10.0.0.7:7100")
    assert session.spec.env_id == "CartPole-v1"
    assert session.options.record and json.loads(session.options.kwargs_json) == {"max_episode_steps": 50}
    assert before <= session.created_at <= time.time()
    [start] = host.starts
    assert start.session_id == session.id and start.options == session.options  # handed on whole
    assert start.entry.id == "cartpole" and start.entry.gymnasium_id == "CartPole-v1"

    assert (await get(ask, session.id)).session == session
    assert await list_ids(ask) == [session.id]

    closed = await close(ask, session.id, "done with it")
    assert not closed.error.code
    assert closed.session.state == control_pb2.SESSION_STATE_CLOSED
    assert closed.session.reason == "done with it"
    assert [(stop.session_id, stop.reason) for stop in host.stops] == [(session.id, "done with it")]
    assert await list_ids(ask) == []
    assert await list_ids(ask, include_closed=True) == [session.id]

    again = await close(ask, session.id, "another reason")
    assert again.session == closed.session and not again.error.code
    assert len(host.stops) == 1

    missing = await close(ask, "s-000000000000")
    assert missing.error.code == "not_found" and "s-000000000000" in missing.error.message
    assert (await get(ask, "s-000000000000")).error.code == "not_found"


async def test_sessions_carry_the_hosts_step_address(broker, envhost, ask):
    host = await envhost(address="10.0.0.7:7100", step_address="10.0.0.7:7200")
    service = await broker()
    session = (await create(ask)).session
    assert (session.host_address, session.step_address) == ("10.0.0.7:7100", "10.0.0.7:7200")
    assert (await get(ask, session.id)).session.step_address == "10.0.0.7:7200"
    assert (await service.store.get(session.id)).step_address == "10.0.0.7:7200"  # stored with the row

    # A running row without one (written before the column existed) gets the live host's.
    old = control_pb2.SessionInfo(id="s-0000000000aa", options=SessionOptions(env_id="cartpole"), host_id=host.host_id,
                                  host_address="10.0.0.7:7100", state=RUNNING, created_at=1.0, last_active_at=1.0)
    await service.store.insert(old)
    assert (await get(ask, old.id)).session.step_address == "10.0.0.7:7200"
    reply = await ask(subjects.BROKER_LIST_SESSIONS, control_pb2.ListSessionsRequest(), control_pb2.ListSessionsReply)
    assert {s.id: s.step_address for s in reply.sessions}[old.id] == "10.0.0.7:7200"
    # ...but not one of another process that had the same host id (another gRPC address).
    other = control_pb2.SessionInfo(id="s-0000000000bb", options=SessionOptions(env_id="cartpole"),
                                    host_id=host.host_id, host_address="10.0.0.7:6999", state=RUNNING,
                                    created_at=1.0, last_active_at=1.0)
    await service.store.insert(other)
    assert (await get(ask, other.id)).session.step_address == ""


async def test_host_without_a_step_link_gives_no_step_address(broker, envhost, ask):
    await envhost()
    await broker()
    session = (await create(ask)).session
    assert session.state == RUNNING and session.step_address == ""


async def test_list_envs_has_the_builtins(broker, ask):
    await broker()
    reply = await ask(subjects.BROKER_LIST_ENVS, control_pb2.ListEnvsRequest(), control_pb2.ListEnvsReply)
    by_id = {entry.id: entry for entry in reply.envs}
    assert {"cartpole", "acrobot", "mountaincar", "mountaincar-continuous", "pendulum"} <= set(by_id)
    assert by_id["pendulum"].gymnasium_id == "Pendulum-v1" and by_id["pendulum"].description
    assert by_id["pendulum"].family == "Classic control"  # with its options, as the catalog declares them
    assert [option.name for option in by_id["pendulum"].options] == ["max_episode_steps", "g", "endless"]


async def test_unknown_env_is_not_found(broker, envhost, ask):
    host = await envhost()
    await broker()
    reply = await create(ask, "nope")
    assert reply.error.code == "not_found"
    assert reply.error.message.startswith("unknown environment 'nope'; known: cartpole, acrobot, mountaincar")
    assert host.starts == [] and await list_ids(ask, include_closed=True) == []


async def test_kwargs_must_be_a_json_object(broker, envhost, ask):
    host = await envhost()
    await broker()
    for bad in ("[1, 2]", "{not json", '"text"'):
        reply = await create(ask, "cartpole", bad)
        assert reply.error.code == "invalid_argument", bad
        assert "cartpole" in reply.error.message
    assert host.starts == [] and await list_ids(ask, include_closed=True) == []


async def test_num_envs_is_checked_and_passed_to_the_env_host(broker, envhost, ask):
    host = await envhost(capacity=2)
    await broker()
    for bad in (257, 100_000):
        reply = await create(ask, num_envs=bad)
        assert reply.error.code == "invalid_argument" and "between 1 and 256" in reply.error.message, bad
    assert host.starts == []
    for num_envs, passed in ((0, 1), (256, 256)):
        reply = await create(ask, num_envs=num_envs)
        assert not reply.error.code, reply.error
        assert host.starts[-1].options.num_envs == passed == reply.session.options.num_envs
    # A vector session is one instance: two fit a host of capacity 2, a third does not.
    assert (await create(ask)).error.code == "unavailable"


async def test_options_are_completed_once_and_kept_whole(broker, envhost, ask):
    host = await envhost()
    service = await broker()
    reply = await create(ask, "cartpole", ' {"max_episode_steps":  9} ', record=True, jpeg_quality=40,
                         life="arm-1", max_frames=500, auto_reset=True)
    assert not reply.error.code, reply.error
    completed = SessionOptions(env_id="cartpole", kwargs_json='{"max_episode_steps": 9}', record=True,
                               record_frames=True, jpeg_quality=40, num_envs=1, life="arm-1", max_frames=500,
                               auto_reset=True)
    assert reply.session.options == completed  # kwargs canonical, one environment, frames kept for the thinning
    assert host.starts[-1].options == completed
    assert (await get(ask, reply.session.id)).session.options == completed
    assert (await service.store.get(reply.session.id)).options == completed


async def test_bad_options_are_invalid_arguments(broker, envhost, ask):
    host = await envhost()
    await broker()
    for options, message in (({"jpeg_quality": 101}, "jpeg_quality must be between 1 and 100"),
                             ({"record_frames": True}, "record_frames keeps frames in the recording"),
                             ({"durable": True}, "durable stores every step's event before answering it: it needs "
                                                 "record=true")):
        reply = await create(ask, **options)
        assert reply.error.code == "invalid_argument" and message in reply.error.message, options
    assert host.starts == [] and await list_ids(ask, include_closed=True) == []


async def test_the_platform_can_make_every_recorded_session_durable(broker, envhost, ask):
    """PLATFORM_DURABLE_STEPS: a recorded session is durable whether it asked or not; one that is
    not recorded is not (nothing of it is stored); without the setting, a session is durable when
    it asks."""
    host = await envhost()
    await broker(durable_steps=True)
    recorded = await create(ask, record=True)
    assert recorded.session.options.durable and host.starts[-1].options.durable
    plain = await create(ask)
    assert not plain.session.options.durable and not plain.error.code


async def test_a_session_asks_to_be_durable(broker, envhost, ask):
    host = await envhost()
    await broker()
    assert not (await create(ask, record=True)).session.options.durable
    asked = await create(ask, record=True, durable=True)
    assert asked.session.options.durable and host.starts[-1].options.durable


async def test_bad_options_name_their_field(broker, envhost, ask):
    host = await envhost()
    await broker()
    for options, field in (({"jpeg_quality": 101}, "jpeg_quality"), ({"record_frames": True}, "record_frames"),
                           ({"num_envs": 257}, "num_envs"), ({"kwargs_json": "[1]"}, "kwargs"),
                           ({"life": "bad name!", "record": True}, "life"), ({"life": "arm-1"}, "record")):
        reply = await create(ask, **options)
        assert (reply.error.code, reply.error.field) == ("invalid_argument", field), options
    assert host.starts == []


async def test_kwargs_are_checked_against_the_entrys_options_before_anything_starts(broker, envhost, ask):
    host = await envhost()
    await broker()
    reply = await create(ask, "pong", '{"frameskip": 0}')
    assert (reply.error.code, reply.error.field) == ("invalid_argument", "kwargs.frameskip")
    assert reply.error.message.startswith("kwargs.frameskip of 'pong' must be an integer from 1 to 60, not 0 (")
    reply = await create(ask, "cartpole", '{"max_episode_steps": 2.5}')
    assert reply.error.field == "kwargs.max_episode_steps" and "must be an integer from 1 to 10000000, not 2.5" in reply.error.message
    assert host.starts == [] and await list_ids(ask, include_closed=True) == []  # no process, no session row
    reply = await create(ask, "ant", '{"frame_skip": 5, "xml_file": "/etc/passwd"}')  # a path on the host
    assert (reply.error.code, reply.error.field) == ("invalid_argument", "kwargs.xml_file")
    assert reply.error.message.startswith("kwargs.xml_file is not an option of 'ant': it takes frame_skip, ")
    assert host.starts == [] and await list_ids(ask, include_closed=True) == []
    reply = await create(ask, "pong", '{"frameskip": 2}')
    assert not reply.error.code, reply.error
    assert host.starts[-1].options.kwargs_json == '{"frameskip": 2}'


async def test_the_platforms_own_kwargs_travel_in_their_typed_fields(broker, envhost, ask):
    """The gateway lifts them out of the kwargs; from a client that did not (an older gateway),
    the broker lifts them itself, the same way."""
    host = await envhost()
    await broker()
    reply = await create(ask, "doom-basic", '{"endless": true, "wad": "wad-1", "doom_map": "MAP02", "tics": 2}')
    assert not reply.error.code, reply.error
    handed = host.starts[-1].options
    assert handed.kwargs_json == '{"tics": 2}'
    assert (handed.endless, handed.wad, handed.doom_map, handed.HasField("world_changes")) == (
        True, "wad-1", "MAP02", False)
    assert reply.session.options == handed  # stored so
    lifted = SessionOptions(env_id="cartpole", kwargs_json="{}", endless=False)
    reply = await ask(subjects.BROKER_CREATE_SESSION, control_pb2.CreateSessionRequest(options=lifted),
                      control_pb2.SessionReply)
    assert not reply.error.code, reply.error
    assert host.starts[-1].options.HasField("endless") and not host.starts[-1].options.endless  # given: kept


async def test_a_platform_kwarg_of_another_type_is_refused_as_any_kwarg(broker, envhost, ask):
    host = await envhost()
    await broker()
    reply = await create(ask, "cartpole", '{"endless": "yes"}')
    assert (reply.error.code, reply.error.field) == ("invalid_argument", "kwargs.endless")
    assert reply.error.message.startswith("kwargs.endless of 'cartpole' must be true or false, not \"yes\" (No time")
    reply = await create(ask, "cartpole", '{"world_changes": {"at": 1}}')
    assert (reply.error.code, reply.error.field) == ("invalid_argument", "kwargs.world_changes")
    assert reply.error.message.startswith("kwargs.world_changes of 'cartpole': must be a list of changes like")
    assert host.starts == []


async def test_no_live_host_is_unavailable(broker, ask):
    await broker()
    reply = await create(ask)
    assert reply.error.code == "unavailable"
    assert "no env host is live" in reply.error.message


async def test_full_hosts_are_unavailable_and_placement_prefers_free_capacity(broker, envhost, ask):
    small = await envhost("small", capacity=1)
    big = await envhost("big", capacity=2)
    await broker()
    placed = [(await create(ask)).session.host_id for _ in range(3)]
    # big has 2 free, small 1: big, then a tie (1 each, lowest id: big), then small.
    assert sorted(placed) == sorted([big.host_id, big.host_id, small.host_id])
    assert placed[0] == big.host_id
    reply = await create(ask)
    assert reply.error.code == "unavailable"
    assert "all 2 live env hosts are full" in reply.error.message


async def test_start_error_is_propagated_and_the_session_closed(broker, envhost, ask):
    host = await envhost()
    host.start_error = control_pb2.ControlError(
        code="invalid_argument", message="factory my_module:make_env failed: ValueError: bad size")
    await broker()
    reply = await create(ask, "acrobot")
    assert reply.error == host.start_error
    assert reply.session.state == control_pb2.SESSION_STATE_CLOSED
    assert "ValueError: bad size" in reply.session.reason
    assert (await get(ask, reply.session.id)).session.state == control_pb2.SESSION_STATE_CLOSED
    assert await list_ids(ask) == []


async def test_start_timeout_is_unavailable(broker, envhost, ask, eventually):
    host = await envhost()
    host.start_delay = 1.5
    await broker(start_timeout=0.3)
    reply = await create(ask)
    assert reply.error.code == "unavailable"
    assert f"no answer on platform.envhost.{host.host_id}.start within 0.3 s" in reply.error.message
    [session_id] = await list_ids(ask, include_closed=True)
    assert session_id in reply.error.message
    session = (await get(ask, session_id)).session
    assert session.state == control_pb2.SESSION_STATE_CLOSED and "start failed" in session.reason

    async def stopped() -> bool:  # the instance that came up late is stopped
        return [stop.session_id for stop in host.stops] == [session_id]

    await eventually(stopped, what="the late instance to be stopped")


async def test_lifecycle_events_mark_crashed_and_closed(broker, envhost, ask, nc, eventually):
    await envhost()
    await broker()
    crashing = (await create(ask)).session
    closing = (await create(ask, "pendulum")).session
    js = nc.jetstream()
    crash = events_pb2.SessionEvent(session_id=crashing.id, kind=events_pb2.SESSION_EVENT_KIND_CRASHED,
                                    options=crashing.options, reason="instance exited with code -9",
                                    log_tail="Traceback...\nMemoryError\n")
    await js.publish(subjects.session_lifecycle(crashing.id), crash.SerializeToString())
    closed = events_pb2.SessionEvent(session_id=closing.id, kind=events_pb2.SESSION_EVENT_KIND_CLOSED,
                                     options=closing.options, reason="env host shutting down")
    await js.publish(subjects.session_lifecycle(closing.id), closed.SerializeToString())

    async def applied() -> bool:
        states = [(await get(ask, s.id)).session.state for s in (crashing, closing)]
        return states == [control_pb2.SESSION_STATE_CRASHED, control_pb2.SESSION_STATE_CLOSED]

    await eventually(applied, what="the lifecycle events to be applied")
    crashed = (await get(ask, crashing.id)).session
    assert crashed.reason == "instance exited with code -9"
    assert crashed.log_tail == "Traceback...\nMemoryError\n"
    assert (await get(ask, closing.id)).session.reason == "env host shutting down"

    # A later CLOSED event does not overwrite the crash.
    late = events_pb2.SessionEvent(session_id=crashing.id, kind=events_pb2.SESSION_EVENT_KIND_CLOSED, reason="x")
    await js.publish(subjects.session_lifecycle(crashing.id), late.SerializeToString())
    marker = (await create(ask)).session
    marker_event = events_pb2.SessionEvent(session_id=marker.id, kind=events_pb2.SESSION_EVENT_KIND_CLOSED,
                                           reason="marker")

    async def marker_closed() -> bool:
        return (await get(ask, marker.id)).session.state == control_pb2.SESSION_STATE_CLOSED

    await js.publish(subjects.session_lifecycle(marker.id), marker_event.SerializeToString())
    await eventually(marker_closed, what="the marker event")  # events are applied in order
    assert (await get(ask, crashing.id)).session == crashed


async def test_idle_sessions_are_stopped(broker, envhost, ask, eventually):
    host = await envhost()
    service = await broker(idle_timeout=1)
    idle = (await create(ask)).session
    busy = (await create(ask)).session
    host.active.add(busy.id)

    async def idle_closed() -> bool:
        return (await get(ask, idle.id)).session.state == control_pb2.SESSION_STATE_CLOSED

    await eventually(idle_closed, timeout=8, what="the idle session to be stopped")
    closed = (await get(ask, idle.id)).session
    assert re.fullmatch(r"idle for \d+ s", closed.reason), closed.reason
    assert int(closed.reason.split()[2]) >= 1
    assert idle.id in [stop.session_id for stop in host.stops]

    # The busy one reports activity in every heartbeat: still running, its activity stored.
    await service.idle.check_once()
    still = (await get(ask, busy.id)).session
    assert still.state == RUNNING
    assert still.last_active_at > busy.created_at
    assert busy.id not in [stop.session_id for stop in host.stops]
