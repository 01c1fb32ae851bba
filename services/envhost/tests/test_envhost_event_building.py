"""Building step events from hand-made responses: auto-resets, holds, restores, sub-sessions, batches."""

from __future__ import annotations

from platform_contracts import subjects
from platform_contracts.step_batches import parse_batch
from platform_contracts.values import datamap_from_dict, dict_from_datamap
from platform_envhost.event_batches import HEADROOM_BYTES, BatchCounter, batch_messages
from platform_envhost.step_events import MSG_ID, StepEventBuilder
from simulusion.bus.v1 import events_pb2 as bus_pb
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as values_pb


def _value(n: int) -> values_pb.Value:
    return values_pb.Value(discrete=n)


def _frame(tag: bytes) -> env_pb.Frame:
    return env_pb.Frame(encoding="jpeg", width=2, height=2, data=tag)


def _step(obs: int, reward: float = 1.0, **fields: object) -> env_pb.StepResponse:
    return env_pb.StepResponse(observation=_value(obs), reward=reward, **fields)  # type: ignore[arg-type]


def _reset_request() -> env_pb.EnvRequest:
    return env_pb.EnvRequest(reset=env_pb.ResetRequest())


def _step_request(action: int, **fields: object) -> env_pb.EnvRequest:
    return env_pb.EnvRequest(step=env_pb.StepRequest(action=_value(action), **fields))  # type: ignore[arg-type]


def _events(builder: StepEventBuilder, request: env_pb.EnvRequest, response: env_pb.EnvResponse,
            agent: values_pb.DataMap | None = None) -> list[bus_pb.StepEvent]:
    return [bus_pb.StepEvent.FromString(m.payload) for m in builder.build(request, response, 1.0, {}, agent)]


def test_an_auto_reset_step_is_the_ending_step_then_a_reset() -> None:
    builder = StepEventBuilder("s1")
    _events(builder, _reset_request(), env_pb.EnvResponse(reset=env_pb.ResetResponse(observation=_value(0))))
    ended = env_pb.AutoReset(final_observation=_value(41), final_info=datamap_from_dict({"why": "fell"}),
                             terminated=True, final_frame=_frame(b"final"))
    response = env_pb.EnvResponse(step=_step(100, reward=0.5, info=datamap_from_dict({"new": 1}),
                                              frame=_frame(b"first"), auto_reset=ended))
    agent = datamap_from_dict({"confidence": 0.9})
    step, reset = _events(builder, _step_request(1, auto_reset=True), response, agent)

    assert (step.seq, step.episode, step.episode_step) == (2, 0, 1)
    result = step.step.result
    assert result.observation == _value(41) and result.reward == 0.5
    assert (result.terminated, result.truncated) == (True, False)
    assert dict_from_datamap(result.info) == {"why": "fell"}
    assert result.frame.data == b"final" and not result.HasField("auto_reset")
    assert step.step.action == _value(1) and dict_from_datamap(step.step.agent) == {"confidence": 0.9}

    assert (reset.seq, reset.episode, reset.episode_step, reset.WhichOneof("kind")) == (3, 1, 0, "reset")
    assert reset.reset.observation == _value(100) and reset.reset.frame.data == b"first"
    assert dict_from_datamap(reset.reset.info) == {"new": 1}
    assert not reset.HasField("reset_seed") and not reset.HasField("reset_options")  # the env reset itself

    [after] = _events(builder, _step_request(0), env_pb.EnvResponse(step=_step(101)))
    assert (after.seq, after.episode, after.episode_step) == (4, 1, 1)


def test_a_reset_event_keeps_the_seed_and_options_it_was_asked() -> None:
    builder = StepEventBuilder("s1")
    response = env_pb.EnvResponse(reset=env_pb.ResetResponse(observation=_value(0)))
    asked = env_pb.EnvRequest(reset=env_pb.ResetRequest(seed=0, options=datamap_from_dict({"level": 3, "x": [1.5]})))
    [seeded] = _events(builder, asked, response)
    assert seeded.HasField("reset_seed") and seeded.reset_seed == 0  # seed 0 is a seed
    assert dict_from_datamap(seeded.reset_options) == {"level": 3, "x": [1.5]}
    [plain] = _events(builder, _reset_request(), response)
    assert not plain.HasField("reset_seed") and not plain.HasField("reset_options")
    [step] = _events(builder, _step_request(1), env_pb.EnvResponse(step=_step(1)))
    assert not step.HasField("reset_seed")


def test_an_endless_restart_records_the_true_flags_of_the_ending() -> None:
    builder = StepEventBuilder("s1")
    ended = env_pb.AutoReset(final_observation=_value(9), truncated=True)
    response = env_pb.EnvResponse(step=_step(0, auto_reset=ended))  # the step itself says neither
    step, reset = _events(builder, _step_request(1), response)
    assert (step.step.result.terminated, step.step.result.truncated) == (False, True)
    assert not step.step.result.HasField("frame") and not reset.reset.HasField("frame")


def test_a_hold_records_every_kept_step_with_the_agent_data_on_the_first() -> None:
    builder = StepEventBuilder("s1")
    _events(builder, _reset_request(), env_pb.EnvResponse(reset=env_pb.ResetResponse(observation=_value(0))))
    kept = [_step(1), _step(2), _step(3, auto_reset=env_pb.AutoReset(final_observation=_value(30), terminated=True)),
            _step(4)]
    request = env_pb.EnvRequest(hold=env_pb.HoldRequest(action=_value(1), steps=4))
    response = env_pb.EnvResponse(hold=env_pb.HoldResponse(steps=4, kept=kept))
    batch = bus_pb.StepEventBatch()
    builder.add(batch.events, request, response, 2.0, datamap_from_dict({"plan": 4}))
    events = list(batch.events)
    assert [(e.seq, e.episode, e.episode_step, e.WhichOneof("kind")) for e in events] == [
        (2, 0, 1, "step"), (3, 0, 2, "step"), (4, 0, 3, "step"), (5, 1, 0, "reset"), (6, 1, 1, "step")]
    assert [e.step.action.discrete for e in events if e.HasField("step")] == [1, 1, 1, 1]
    assert dict_from_datamap(events[0].step.agent) == {"plan": 4}
    assert not any(e.step.HasField("agent") for e in events[1:])
    assert events[2].step.result.observation == _value(30) and events[3].reset.observation == _value(3)


def test_restore_and_restore_saved_start_an_episode_and_failures_record_nothing() -> None:
    builder = StepEventBuilder("s1")
    restored = env_pb.EnvResponse(restore_saved=env_pb.RestoreSavedResponse(
        observation=_value(5), info=datamap_from_dict({"at": 5})))
    [event] = _events(builder, env_pb.EnvRequest(restore_saved=env_pb.RestoreSavedRequest(id="x")), restored)
    assert (event.seq, event.episode, event.episode_step, event.WhichOneof("kind")) == (1, 0, 0, "restore")
    assert event.restore.observation == _value(5) and dict_from_datamap(event.restore.info) == {"at": 5}
    failed = env_pb.EnvResponse(error=env_pb.Error(code=env_pb.ERROR_CODE_INVALID_ACTION, message="no"))
    assert builder.build(_step_request(7), failed, 1.0, {}) == []
    assert builder.build(env_pb.EnvRequest(render=env_pb.RenderRequest()),
                         env_pb.EnvResponse(render=env_pb.RenderResponse()), 1.0, {}) == []
    assert builder.seq == 1


def test_a_sub_session_names_itself_on_its_parents_subjects() -> None:
    sub_id = subjects.sub_session_id("s1", 3)
    builder = StepEventBuilder(sub_id, "s1")
    [message] = builder.build(_reset_request(), env_pb.EnvResponse(reset=env_pb.ResetResponse()), 1.0,
                              {"traceparent": "00-abc"})
    assert message.subject == subjects.session_steps("s1")
    assert message.headers == {"traceparent": "00-abc", MSG_ID: subjects.step_msg_id(sub_id, 1)}
    assert bus_pb.StepEvent.FromString(message.payload).session_id == "s1-3"
    [snapshot] = builder.build(env_pb.EnvRequest(snapshot=env_pb.SnapshotRequest()),
                               env_pb.EnvResponse(snapshot=env_pb.SnapshotResponse(handle="h1")), 1.0, {})
    assert snapshot.subject == subjects.session_snapshots("s1")
    assert snapshot.headers[MSG_ID] == "s1-3:snapshot:h1"
    assert bus_pb.SnapshotEvent.FromString(snapshot.payload).seq == 1


def _batch(builders: list[StepEventBuilder], steps: int, payload: int = 0) -> bus_pb.StepEventBatch:
    batch = bus_pb.StepEventBatch()
    for _ in range(steps):
        for builder in builders:
            builder.add_step(batch.events, _value(0), _step(1, info=datamap_from_dict({"pad": "x" * payload})), 1.0)
    return batch


def test_a_batch_is_one_message_numbered_by_the_sessions_batch_counter() -> None:
    counter = BatchCounter("s1")
    builders = [StepEventBuilder(subjects.sub_session_id("s1", i), "s1") for i in range(4)]
    first = batch_messages(_batch(builders, 1), counter, {"traceparent": "t"}, 1024 * 1024)
    second = batch_messages(_batch(builders, 1), counter, {}, 1024 * 1024)
    assert batch_messages(bus_pb.StepEventBatch(), counter, {}, 1024 * 1024) == []
    assert [len(first), len(second)] == [1, 1]
    assert first[0].subject == subjects.session_step_batches("s1")
    assert first[0].headers == {"traceparent": "t", MSG_ID: subjects.step_batch_msg_id("s1", 1)}
    assert second[0].headers[MSG_ID] == "s1:batch:2"
    events = parse_batch(second[0].payload)
    assert [(e.session_id, e.seq) for e in events] == [(f"s1-{i}", 2) for i in range(4)]


def test_a_batch_larger_than_a_message_is_split_in_order() -> None:
    counter = BatchCounter("s1")
    builder = StepEventBuilder("s1")
    batch = _batch([builder], 50, payload=1000)
    max_payload = HEADROOM_BYTES + 10_000  # about 9 events a message
    messages = batch_messages(batch, counter, {}, max_payload)
    assert len(messages) >= 5
    assert all(len(m.payload) <= max_payload - HEADROOM_BYTES for m in messages)
    assert [m.headers[MSG_ID] for m in messages] == [f"s1:batch:{n}" for n in range(1, len(messages) + 1)]
    seqs = [e.seq for m in messages for e in parse_batch(m.payload)]
    assert seqs == list(range(1, 51))
