"""Holds through a real env host and environment server: recorded as StepEventBatch messages, the
kept steps stripped, long holds in chunks, agent data with the first step."""

from __future__ import annotations

import json
from typing import Any

from envhost_testkit import (
    EnvHostProcess,
    events_of,
    new_session_id,
    recorded_events,
    recorded_messages,
    stop_session,
    stored_count,
)
from platform_contracts import subjects
from platform_contracts.values import datamap_from_dict, dict_from_datamap
from platform_envhost.holds import HOLD_CHUNK_STEPS
from simulusion.env.v1 import environment_pb2 as env_pb
from step_path_kit import hold, reset, start, step


async def test_a_recorded_hold_is_one_batch_with_the_agent_data_on_its_first_step(
        envhost: EnvHostProcess, nats_client: Any, js: Any, open_link: Any) -> None:
    session_id = new_session_id()
    await start(nats_client, envhost.host_id, session_id, record=True)
    link = await open_link(envhost.step_address, session_id)
    await link.request(reset(seed=3))
    request = hold(0, 5)
    request.hold.agent.CopyFrom(datamap_from_dict({"confidence": 0.7, "refused": False, "note": "text"}))
    response = await link.request(request)

    held = response.hold
    assert response.WhichOneof("result") == "hold", response
    assert held.steps == 5 and list(held.rewards) == [1.0] * 5
    assert len(held.kept) == 0 and len(held.frames) == 0  # asked by the env host, not by the client
    assert list(response.warnings) == [
        "agent data 'note' left out: a string; values are finite numbers, booleans or lists of up to 256 numbers"]
    after = await link.request(step(1))

    # The gathered reset goes before the hold, the hold as one batch, then the gathered step.
    before, message, later = await recorded_messages(js, session_id, 7)
    assert [m.headers["Nats-Msg-Id"] for m in (before, message, later)] == [
        subjects.step_batch_msg_id(session_id, n) for n in (1, 2, 3)]
    events = events_of(message)
    assert [(e.session_id, e.seq, e.episode, e.episode_step) for e in events] == [
        (session_id, seq, 0, seq - 1) for seq in range(2, 7)]
    assert all(e.step.action.discrete == 0 for e in events)
    assert dict_from_datamap(events[0].step.agent) == {"confidence": 0.7, "refused": 0.0}
    assert not any(e.step.HasField("agent") for e in events[1:])
    assert events[-1].step.result.observation == held.observation

    [reset_event], [step_event] = events_of(before), events_of(later)
    assert (reset_event.seq, step_event.seq) == (1, 7)
    assert step_event.step.result == after.step
    await stop_session(nats_client, envhost.host_id, session_id)


async def test_a_hold_the_client_keeps_steps_of_is_forwarded_whole(
        envhost: EnvHostProcess, nats_client: Any, js: Any, open_link: Any) -> None:
    session_id = new_session_id()
    await start(nats_client, envhost.host_id, session_id, record=True)
    link = await open_link(envhost.step_address, session_id)
    await link.request(reset(seed=1))
    response = await link.request(hold(1, 500, keep_steps=True))
    held = response.hold
    assert held.terminated and 0 < held.steps < 500  # CartPole falls: the hold stops with the episode
    assert len(held.kept) == held.steps
    events = await recorded_events(js, session_id, 1 + held.steps)
    assert events[0].HasField("reset")
    assert [e.step.result for e in events[1:]] == list(held.kept)
    await stop_session(nats_client, envhost.host_id, session_id)


async def test_a_long_recorded_hold_goes_in_chunks_and_answers_as_one(
        envhost: EnvHostProcess, nats_client: Any, js: Any, open_link: Any) -> None:
    session_id = new_session_id()
    await start(nats_client, envhost.host_id, session_id, record=True, kwargs_json=json.dumps({"endless": True}))
    link = await open_link(envhost.step_address, session_id)
    await link.request(reset(seed=2))
    steps = 3 * HOLD_CHUNK_STEPS + 40
    response = await link.request(hold(0, steps, keep_steps=True), timeout=60)
    held = response.hold
    assert response.WhichOneof("result") == "hold", response
    assert held.steps == steps and len(held.rewards) == steps and len(held.kept) == steps
    assert not held.terminated and not held.truncated  # endless: the falls restarted in place
    restarts = sum(1 for kept in held.kept if kept.HasField("auto_reset"))
    assert restarts > 10

    [reset_message, *messages] = await recorded_messages(js, session_id, 1 + steps + restarts)
    assert [e.seq for e in events_of(reset_message)] == [1]
    assert [m.headers["Nats-Msg-Id"] for m in messages] == [f"{session_id}:batch:{n}" for n in range(2, 6)]
    events = [e for m in messages for e in events_of(m)]
    assert [e.seq for e in events] == list(range(2, 2 + steps + restarts))
    assert sum(1 for e in events if e.HasField("step")) == steps
    assert sum(1 for e in events if e.HasField("reset")) == restarts
    assert max(e.episode for e in events) == restarts
    last = held.kept[-1]
    assert held.observation == last.observation and events[-1].step.result.reward == last.reward

    follow = await link.request(step(1))
    assert follow.WhichOneof("result") == "step"
    step_event = (await recorded_events(js, session_id, 2 + steps + restarts))[-1]
    assert step_event.seq == 2 + steps + restarts and step_event.step.result == follow.step
    await stop_session(nats_client, envhost.host_id, session_id)
    assert await stored_count(js, subjects.session_step_batches(session_id)) == 6  # reset, 4 chunks, step


async def test_holds_the_instance_refuses_answer_its_error_and_record_nothing(
        envhost: EnvHostProcess, nats_client: Any, js: Any, open_link: Any) -> None:
    session_id = new_session_id()
    await start(nats_client, envhost.host_id, session_id, record=True)
    link = await open_link(envhost.step_address, session_id)
    await link.request(reset(seed=2))
    too_long = await link.request(hold(0, 10_001))
    too_many_frames = await link.request(hold(0, 300, frames=True))
    for response, limit in ((too_long, "10000"), (too_many_frames, "256")):
        assert response.error.code == env_pb.ERROR_CODE_INVALID_ARGUMENT and limit in response.error.message
    await stop_session(nats_client, envhost.host_id, session_id)
    assert await stored_count(js, subjects.session_step_batches(session_id)) == 1
    assert [e.WhichOneof("kind") for e in await recorded_events(js, session_id, 1)] == ["reset"]  # only


async def test_a_session_recording_frames_records_a_frame_per_held_step(
        envhost: EnvHostProcess, nats_client: Any, js: Any, open_link: Any) -> None:
    session_id = new_session_id()
    await start(nats_client, envhost.host_id, session_id, record=True, record_frames=True)
    link = await open_link(envhost.step_address, session_id)
    await link.request(reset(seed=4))
    response = await link.request(hold(0, 3))
    assert response.hold.steps == 3 and len(response.hold.frames) == 0 and len(response.hold.kept) == 0
    events = await recorded_events(js, session_id, 4)
    # the reset's frame is CartPole's painted one (the recorder paints it from the observation:
    # platform_contracts.painted_frames); a hold renders the frames of its steps
    assert events[0].reset.frame.encoding == "painted:cartpole"
    assert [e.step.result.frame.encoding for e in events[1:]] == ["jpeg"] * 3
    with_frames = await link.request(hold(0, 2, frames=True))
    assert [f.encoding for f in with_frames.hold.frames] == ["jpeg"] * 2 and len(with_frames.hold.kept) == 0
    await stop_session(nats_client, envhost.host_id, session_id)


async def test_an_unrecorded_hold_warns_about_agent_data_and_publishes_nothing(
        envhost: EnvHostProcess, nats_client: Any, js: Any, open_link: Any) -> None:
    session_id = new_session_id()
    await start(nats_client, envhost.host_id, session_id)
    link = await open_link(envhost.step_address, session_id)
    await link.request(reset(seed=4))
    request = hold(0, 4)
    request.hold.agent.CopyFrom(datamap_from_dict({"ok": 1.0, "bad": float("nan")}))
    response = await link.request(request)
    assert response.hold.steps == 4
    assert list(response.warnings) == [
        ("agent data 'bad' left out: nan is not finite; values are finite numbers, booleans or lists of up to "
        "256 numbers")]
    await stop_session(nats_client, envhost.host_id, session_id)
    assert await stored_count(js, subjects.session_step_batches(session_id)) == 0
