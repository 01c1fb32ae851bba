"""Vector sessions through a real env host and a vector environment server: a batch's responses
become one StepEventBatch whose events name each sub-environment's sub-session."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from envhost_testkit import (
    EnvHostProcess,
    events_of,
    lifecycle_events,
    new_session_id,
    recorded_messages,
    stop_session,
    stored_count,
)
from platform_contracts import subjects
from platform_contracts.step_batches import parse_batch
from platform_contracts.values import datamap_from_dict, dict_from_datamap
from simulusion.bus.v1 import events_pb2 as bus_pb
from simulusion.env.v1 import environment_pb2 as env_pb
from step_path_kit import batch, batch_messages, hold, reset, start, step

NUM_ENVS = 3


async def test_batches_of_a_recorded_vector_session_become_sub_session_event_batches(
        envhost: EnvHostProcess, nats_client: Any, js: Any, open_link: Any) -> None:
    session_id = new_session_id()
    reply = await start(nats_client, envhost.host_id, session_id, record=True, num_envs=NUM_ENVS)
    assert reply.spec.num_envs == NUM_ENVS
    link = await open_link(envhost.step_address, session_id)
    subs = range(NUM_ENVS)

    resets = await link.request(batch(*((i, reset(seed=i)) for i in subs)))
    assert [r.WhichOneof("result") for r in resets.batch.responses] == ["reset"] * NUM_ENVS
    answers = []  # every sub-response, in order, per sub-environment
    for n in range(40):  # constant pushes: every sub-environment's pole falls and auto-resets
        response = await link.request(batch(*((i, step(i % 2, auto_reset=True)) for i in subs)))
        assert [r.WhichOneof("result") for r in response.batch.responses] == ["step"] * NUM_ENVS, response
        answers.append(response.batch.responses)

    messages = await batch_messages(js, session_id, 41)
    assert [m.headers["Nats-Msg-Id"] for m in messages] == [f"{session_id}:batch:{n}" for n in range(1, 42)]
    per_sub: dict[str, list[bus_pb.StepEvent]] = defaultdict(list)
    for message in messages:
        for event in parse_batch(message.data):
            per_sub[event.session_id].append(event)
    assert sorted(per_sub) == [subjects.sub_session_id(session_id, i) for i in subs]
    for i in subs:
        events = per_sub[subjects.sub_session_id(session_id, i)]
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        assert events[0].reset == resets.batch.responses[i].reset
        steps = [e for e in events if e.HasField("step")]
        assert len(steps) == 40
        ended = 0
        for event, answered in zip(steps, (a[i].step for a in answers), strict=True):
            assert event.step.action.discrete == i % 2
            if answered.HasField("auto_reset"):  # the ending as the env ended it, then the reset
                ended += 1
                assert event.step.result.observation == answered.auto_reset.final_observation
                assert event.step.result.terminated or event.step.result.truncated
                follow = events[events.index(event) + 1]
                assert follow.reset.observation == answered.observation and follow.episode == ended
            else:
                assert event.step.result == answered
        assert ended >= 1
    await stop_session(nats_client, envhost.host_id, session_id)


async def test_requests_outside_a_batch_are_recorded_under_sub_session_0(
        envhost: EnvHostProcess, nats_client: Any, js: Any, open_link: Any) -> None:
    session_id = new_session_id()
    await start(nats_client, envhost.host_id, session_id, record=True, num_envs=2)
    link = await open_link(envhost.step_address, session_id)
    await link.request(batch((0, reset(seed=0)), (1, reset(seed=1))))
    plain = await link.request(step(1))
    assert plain.WhichOneof("result") == "step"
    await link.request(batch((0, step(0)), (1, step(0))))

    # The plain step's event is gathered, and sent before the next batch's.
    messages = await recorded_messages(js, session_id, 2 + 1 + 2)
    assert [len(events_of(m)) for m in messages] == [2, 1, 2]
    [event] = events_of(messages[1])
    first_sub = subjects.sub_session_id(session_id, 0)
    assert (event.session_id, event.seq, event.episode_step) == (first_sub, 2, 1)
    assert event.step.result == plain.step
    last = events_of(messages[2])
    assert [(e.session_id, e.seq, e.episode_step) for e in last] == [
        (first_sub, 3, 2), (subjects.sub_session_id(session_id, 1), 2, 1)]
    await stop_session(nats_client, envhost.host_id, session_id)
    _, close = await lifecycle_events(js, session_id, 2)
    # each sub-environment's last published seq, for its recording to check against
    assert close.kind == bus_pb.SESSION_EVENT_KIND_CLOSED
    assert (close.last_seq, list(close.sub_last_seqs)) == (3, [3, 2])


async def test_agent_data_of_sub_requests_is_checked_per_sub_environment(
        envhost: EnvHostProcess, nats_client: Any, js: Any, open_link: Any) -> None:
    session_id = new_session_id()
    await start(nats_client, envhost.host_id, session_id, record=True, num_envs=2)
    link = await open_link(envhost.step_address, session_id)
    await link.request(batch((0, reset(seed=0)), (1, reset(seed=1))))
    first = await link.request(batch((0, step(0, agent=datamap_from_dict({"q": [1.0, 2.0]}))),
                                     (1, step(0, agent=datamap_from_dict({"q": 0.5})))))
    assert list(first.warnings) == []  # each sub-environment is its own recording, with its own shapes
    second = await link.request(batch((0, step(0, agent=datamap_from_dict({"q": 0.5, "ok": True}))),
                                      (1, step(0, agent=datamap_from_dict({"q": 0.25})))))
    assert list(second.warnings) == [
        ("sub-environment 0: agent data 'q' left out: a name keeps the shape of its first value (a list of 2), "
        "not a number")]
    events = [e for m in await batch_messages(js, session_id, 3)
              for e in parse_batch(m.data)]
    agents = [(e.session_id[-1], dict_from_datamap(e.step.agent)) for e in events[4:]]
    assert agents == [("0", {"ok": 1.0}), ("1", {"q": 0.25})]
    await stop_session(nats_client, envhost.host_id, session_id)


async def test_holds_and_failures_inside_a_batch(envhost: EnvHostProcess, nats_client: Any, js: Any,
                                                 open_link: Any) -> None:
    session_id = new_session_id()
    await start(nats_client, envhost.host_id, session_id, record=True, num_envs=2)
    link = await open_link(envhost.step_address, session_id)
    await link.request(batch((0, reset(seed=0)), (1, reset(seed=1))))
    response = await link.request(batch((1, hold(0, 4)), (0, hold(1, 2, keep_steps=True)), (5, step(0))))
    held_1, held_0, missing = response.batch.responses
    assert held_1.hold.steps == 4 and len(held_1.hold.kept) == 0  # kept steps asked by the env host: stripped
    assert held_0.hold.steps == 2 and len(held_0.hold.kept) == 2  # asked by the client: kept
    assert missing.error.code == env_pb.ERROR_CODE_INVALID_ARGUMENT

    [_, message] = await batch_messages(js, session_id, 2)
    events = parse_batch(message.data)
    sub_0, sub_1 = (subjects.sub_session_id(session_id, i) for i in (0, 1))
    assert [(e.session_id, e.seq) for e in events] == [(sub_1, 2), (sub_1, 3), (sub_1, 4), (sub_1, 5),
                                                       (sub_0, 2), (sub_0, 3)]
    assert [e.step.result for e in events[4:]] == list(held_0.hold.kept)
    await stop_session(nats_client, envhost.host_id, session_id)
    assert await stored_count(js, subjects.session_steps(session_id)) == 0


async def test_an_unrecorded_vector_session_publishes_nothing(envhost: EnvHostProcess, nats_client: Any, js: Any,
                                                              open_link: Any) -> None:
    session_id = new_session_id()
    await start(nats_client, envhost.host_id, session_id, num_envs=2)
    link = await open_link(envhost.step_address, session_id)
    await link.request(batch((0, reset(seed=0)), (1, reset(seed=1))))
    response = await link.request(batch((0, step(0)), (1, hold(1, 3))))
    assert [r.WhichOneof("result") for r in response.batch.responses] == ["step", "hold"]
    await stop_session(nats_client, envhost.host_id, session_id)
    assert await stored_count(js, subjects.session_step_batches(session_id)) == 0
