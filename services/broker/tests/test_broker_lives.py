"""Lives in the broker: checked settings, one open session per life, the life passed to the env host."""

from __future__ import annotations

import asyncio

import pytest
from platform_contracts import subjects
from simulusion.bus.v1 import events_pb2
from simulusion.control.v1 import control_pb2
from simulusion.session.v1.options_pb2 import SessionOptions

OPEN = (control_pb2.SESSION_STATE_STARTING, control_pb2.SESSION_STATE_RUNNING)


async def create(ask, life: str = "", frame_every: int = 0, max_frames: int = 0, **fields):
    fields.setdefault("record", True)
    request = control_pb2.CreateSessionRequest(options=SessionOptions(
        env_id="cartpole", life=life, frame_every=frame_every, max_frames=max_frames, **fields))
    return await ask(subjects.BROKER_CREATE_SESSION, request, control_pb2.SessionReply)


async def get(ask, session_id: str) -> control_pb2.SessionInfo:
    reply = await ask(subjects.BROKER_GET_SESSION, control_pb2.GetSessionRequest(session_id=session_id),
                      control_pb2.SessionReply)
    return reply.session


async def close(ask, session_id: str) -> control_pb2.SessionReply:
    return await ask(subjects.BROKER_CLOSE_SESSION, control_pb2.CloseSessionRequest(session_id=session_id),
                     control_pb2.SessionReply)


def holder_message(session_id: str) -> str:
    return f"life robot-1 is being recorded by session {session_id}; close it first"


async def test_a_life_is_stored_and_passed_to_the_env_host(broker, envhost, ask):
    host = await envhost()
    await broker()
    reply = await create(ask, "robot-1", frame_every=4, max_frames=20_000)
    assert not reply.error.code, reply.error
    session = reply.session
    assert session.state == control_pb2.SESSION_STATE_RUNNING and session.options.life == "robot-1"
    assert (await get(ask, session.id)).options.life == "robot-1"
    [start] = host.starts
    assert (start.options.life, start.options.frame_every, start.options.max_frames) == ("robot-1", 4, 20_000)
    assert start.options.record and start.options.record_frames  # thinning frames means keeping frames

    plain = (await create(ask, "arm.7_b")).session  # no frame settings: frames as asked (none)
    start = host.starts[-1]
    assert start.session_id == plain.id and start.options.life == "arm.7_b" and not start.options.record_frames
    unnamed = (await create(ask)).session
    assert unnamed.options.life == "" and host.starts[-1].options.life == ""


async def test_one_open_session_per_life(broker, envhost, ask, nc, eventually):
    host = await envhost()
    await broker()
    first = (await create(ask, "robot-1")).session

    refused = await create(ask, "robot-1")
    assert refused.error.code == "failed_precondition"
    assert refused.error.message == holder_message(first.id)
    assert [start.session_id for start in host.starts] == [first.id]  # nothing was started for it
    assert not (await create(ask, "robot-2")).error.code  # another life is free

    assert (await close(ask, first.id)).session.state == control_pb2.SESSION_STATE_CLOSED
    second = await create(ask, "robot-1")
    assert not second.error.code, second.error
    assert second.session.options.life == "robot-1" and second.session.id != first.id

    # A crash (a lifecycle event from the env host) frees the life as well.
    crash = events_pb2.SessionEvent(session_id=second.session.id, kind=events_pb2.SESSION_EVENT_KIND_CRASHED,
                                    options=second.session.options, reason="instance exited with code -9")
    await nc.jetstream().publish(subjects.session_lifecycle(second.session.id), crash.SerializeToString())

    async def crashed() -> bool:
        return (await get(ask, second.session.id)).state == control_pb2.SESSION_STATE_CRASHED

    await eventually(crashed, what="the CRASHED event to be applied")
    third = await create(ask, "robot-1")
    assert not third.error.code, third.error


async def test_creates_of_one_life_at_once_start_exactly_one(broker, envhost, ask):
    host = await envhost(capacity=8)
    await broker()
    replies = await asyncio.gather(*(create(ask, "robot-1") for _ in range(6)))
    [winner] = [reply.session for reply in replies if not reply.error.code]
    refused = [reply.error for reply in replies if reply.error.code]
    assert len(refused) == 5
    assert all(error.code == "failed_precondition" and error.message == holder_message(winner.id)
               for error in refused)
    assert [start.session_id for start in host.starts] == [winner.id]


async def test_a_failed_start_frees_the_life(broker, envhost, ask):
    host = await envhost()
    host.start_error = control_pb2.ControlError(code="invalid_argument", message="factory failed")
    await broker()
    failed = await create(ask, "robot-1")
    assert failed.error.code == "invalid_argument" and failed.session.state == control_pb2.SESSION_STATE_CLOSED
    host.start_error = None
    assert not (await create(ask, "robot-1")).error.code


@pytest.mark.parametrize(("fields", "message"), [
    ({"life": "robot 1"}, "life name 'robot 1' is not valid: use 1-64 letters, digits, '_', '.' or '-'"),
    ({"life": "a/b"}, "life name 'a/b' is not valid"),
    ({"life": "x" * 65}, "is not valid"),
    ({"life": "robot-1", "record": False}, "life robot-1 is a recording: it needs record=true"),
    ({"frame_every": 3}, "frame_every and max_frames thin the frames of a life: give the life a name"),
    ({"max_frames": 100}, "give the life a name"),
    ({"life": "robot-1", "num_envs": 2}, "a vector session (num_envs=2) cannot append to it"),
])
async def test_bad_life_settings_are_invalid_arguments(broker, envhost, ask, fields, message):
    host = await envhost()
    await broker()
    reply = await create(ask, **fields)
    assert reply.error.code == "invalid_argument" and message in reply.error.message, reply.error
    assert host.starts == []


async def test_a_create_with_a_life_takes_no_warm_instance(broker, envhost, ask, eventually):
    host = await envhost()
    await broker(pools={"cartpole": 1})

    async def filled() -> bool:
        return len(host.pooled) == 1
    await eventually(filled, 10, "the pool to fill")
    reply = await create(ask, "robot-1", max_frames=50)
    assert not reply.error.code, reply.error
    assert host.claims == [] and len(host.pooled) == 1
    [start] = [start for start in host.starts if start.session_id == reply.session.id]
    assert not start.pooled and start.options.life == "robot-1" and start.options.record_frames
