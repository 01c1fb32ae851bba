"""Step events of recorded sessions: numbering, content, gathering into batches, Nats-Msg-Id
dedup, trace context."""

from __future__ import annotations

from typing import Any

from envhost_testkit import (
    EnvHostProcess,
    events_of,
    new_session_id,
    read_subject,
    recorded_events,
    recorded_messages,
    start_session,
    stop_session,
    stored_count,
    stored_step_messages,
)
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from platform_contracts import subjects
from platform_contracts.tracing import inject_dict
from platform_contracts.values import dict_from_datamap
from simulusion.bus.v1 import events_pb2 as bus_pb
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2
from step_path_kit import start


async def test_recorded_session_numbers_its_events(envhost: EnvHostProcess, nats_client: Any, js: Any,
                                                   open_stream: Any) -> None:
    session_id = new_session_id()
    await start_session(nats_client, envhost.host_id, session_id, record=True)
    stream = open_stream(envhost.address, session_id)

    reset = await stream.reset(seed=5)
    steps = [await stream.step(a, policy="ppo", value=0.5) for a in (0, 1, 0)]
    invalid = await stream.request(env_pb.EnvRequest(step=env_pb.StepRequest(action=values_pb2.Value(discrete=7))))
    assert invalid.error.code == env_pb.ERROR_CODE_INVALID_ACTION  # no event for a failed command
    await stream.reset(seed=6)
    await stream.step(1)
    snapshot = await stream.request(env_pb.EnvRequest(snapshot=env_pb.SnapshotRequest()))
    assert snapshot.WhichOneof("result") == "snapshot", snapshot
    await stream.step(1)
    restore = await stream.request(env_pb.EnvRequest(restore=env_pb.RestoreRequest(handle=snapshot.snapshot.handle)))
    assert restore.WhichOneof("result") == "restore", restore
    assert restore.restore.HasField("seconds") and restore.restore.seconds > 0  # the instance's restore time
    await stream.step(0)

    messages = await recorded_messages(js, session_id, 9)
    events = [e for m in messages for e in events_of(m)]
    assert [e.seq for e in events] == list(range(1, 10))
    assert [(e.episode, e.episode_step) for e in events] == [
        (0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1), (1, 2), (2, 0), (2, 1)]
    assert [e.WhichOneof("kind") for e in events] == ["reset"] + ["step"] * 3 + ["reset", "step", "step",
                                                                                    "restore", "step"]
    assert all(e.session_id == session_id and e.time > 0 for e in events)
    # Gathered into StepEventBatch messages: the snapshot (its own subject) sends those before it.
    assert [m.subject for m in messages] == [subjects.session_step_batches(session_id)] * 2
    assert [len(events_of(m)) for m in messages] == [6, 3]
    assert [m.headers["Nats-Msg-Id"] for m in messages] == [subjects.step_batch_msg_id(session_id, n) for n in (1, 2)]
    assert events[0].reset == reset.reset
    assert events[1].step.result == steps[0].step
    assert [e.step.action.discrete for e in events[1:4]] == [0, 1, 0]
    # "policy" breaks a rule (a string): left out of the recording, with a warning; the step went on.
    assert dict_from_datamap(events[2].step.agent) == {"value": 0.5}
    assert [list(s.warnings) for s in steps] == [[
        "agent data 'policy' left out: a string; values are finite numbers, booleans or lists of up to 256 numbers"
    ]] * 3
    assert events[7].restore == restore.restore

    [snap_msg] = await read_subject(js, subjects.session_snapshots(session_id), 1)
    snap = bus_pb.SnapshotEvent.FromString(snap_msg.data)
    assert (snap.session_id, snap.handle, snap.seq) == (session_id, snapshot.snapshot.handle, 6)

    # A retried publish (same Nats-Msg-Id) is stored once.
    ack = await js.publish(messages[1].subject, messages[1].data, headers={"Nats-Msg-Id": messages[1].headers["Nats-Msg-Id"]})
    assert ack.duplicate
    assert await stored_step_messages(js, session_id) == 2

    stop = await stop_session(nats_client, envhost.host_id, session_id)
    assert stop.stopped


async def test_unrecorded_session_publishes_no_step_events(envhost: EnvHostProcess, nats_client: Any, js: Any,
                                                           open_stream: Any) -> None:
    session_id = new_session_id()
    await start_session(nats_client, envhost.host_id, session_id, record=False)
    stream = open_stream(envhost.address, session_id)
    await stream.reset(seed=1)
    await stream.step(0)
    await stop_session(nats_client, envhost.host_id, session_id)  # CLOSED follows any step event
    assert await stored_count(js, subjects.session_lifecycle(session_id)) == 2
    assert await stored_step_messages(js, session_id) == 0


async def test_step_events_carry_the_request_trace(envhost: EnvHostProcess, nats_client: Any, js: Any,
                                                   open_stream: Any) -> None:
    session_id = new_session_id()
    await start_session(nats_client, envhost.host_id, session_id, record=True)
    stream = open_stream(envhost.address, session_id)
    tracer = TracerProvider().get_tracer("test")
    with tracer.start_as_current_span("agent.reset") as span:
        carrier = inject_dict()
        await stream.request(env_pb.EnvRequest(reset=env_pb.ResetRequest(seed=2), trace_context=carrier))
    trace_id = span.get_span_context().trace_id
    await stream.step(1)  # untraced

    traced, untraced = await recorded_messages(js, session_id, 2)
    assert traced.subject == subjects.session_steps(session_id)  # a traced step's event goes alone
    parent = traced.headers["traceparent"]
    assert parent.split("-")[1] == f"{trace_id:032x}"
    assert parent != carrier["traceparent"]  # the env host's own span
    assert untraced.subject == subjects.session_step_batches(session_id)
    assert "traceparent" not in untraced.headers
    assert trace.get_current_span().get_span_context().is_valid is False
    await stop_session(nats_client, envhost.host_id, session_id)


async def test_an_auto_reset_step_is_recorded_as_the_ending_step_then_a_reset(
        envhost: EnvHostProcess, nats_client: Any, js: Any, open_link: Any) -> None:
    session_id = new_session_id()
    await start(nats_client, envhost.host_id, session_id, record=True, record_frames=True)
    link = await open_link(envhost.step_address, session_id)
    await link.reset(seed=7)
    answers = []
    while True:  # one constant push: the pole falls
        request = env_pb.EnvRequest(step=env_pb.StepRequest(action=values_pb2.Value(discrete=1), auto_reset=True))
        answers.append((await link.request(request)).step)
        if answers[-1].HasField("auto_reset"):
            break
    ended = answers[-1]
    assert ended.terminated and ended.auto_reset.terminated  # outside endless sessions the step says it too
    # The frames are rendered for the recording (render_later): they come to the env host later.
    assert ended.frame_later and not ended.HasField("frame") and not ended.auto_reset.HasField("final_frame")

    parsed = await recorded_events(js, session_id, len(answers) + 2)
    assert len(parsed) == len(answers) + 2
    last_step, reset = parsed[-2], parsed[-1]
    result = last_step.step.result
    assert result.observation == ended.auto_reset.final_observation and result.terminated
    # CartPole's recorded frames are painted by the recorder from each event's observation
    # (platform_contracts.painted_frames): the ending step's from the final observation, the
    # reset's from the new episode's first
    assert result.frame.encoding == "painted:cartpole" and not result.HasField("auto_reset")
    assert (reset.WhichOneof("kind"), reset.episode, reset.episode_step) == ("reset", 1, 0)
    assert reset.reset.observation == ended.observation and reset.reset.frame.encoding == "painted:cartpole"
    assert reset.reset.observation != result.observation and not reset.reset.frame_later
    for event, answer in zip(parsed[1:-2], answers[:-1], strict=True):
        assert event.step.result.frame.encoding == "painted:cartpole" and not event.step.result.frame_later
        expected = env_pb.StepResponse()
        expected.CopyFrom(answer)
        expected.frame_later = False
        expected.frame.CopyFrom(event.step.result.frame)
        assert event.step.result == expected
    await stop_session(nats_client, envhost.host_id, session_id)


async def test_an_endless_session_records_each_restart_as_an_episode(
        envhost: EnvHostProcess, nats_client: Any, js: Any, open_link: Any) -> None:
    session_id = new_session_id()
    await start(nats_client, envhost.host_id, session_id, record=True, endless=True)  # as the broker hands it on
    link = await open_link(envhost.step_address, session_id)
    await link.reset(seed=7)
    answers = [(await link.step(1)).step for _ in range(40)]
    restarts = [i for i, a in enumerate(answers) if a.HasField("auto_reset")]
    assert restarts and not any(a.terminated or a.truncated for a in answers)
    parsed = await recorded_events(js, session_id, 1 + len(answers) + len(restarts))
    assert len(parsed) == 1 + len(answers) + len(restarts)
    assert [e.seq for e in parsed] == list(range(1, len(parsed) + 1))
    assert max(e.episode for e in parsed) == len(restarts)
    ends = [e for e in parsed if e.HasField("step") and e.step.result.terminated]
    assert len(ends) == len(restarts)
    await stop_session(nats_client, envhost.host_id, session_id)


async def test_steps_gather_in_batches_of_at_most_64_sent_before_the_sessions_close(
        envhost: EnvHostProcess, nats_client: Any, js: Any, open_link: Any) -> None:
    session_id = new_session_id()
    # In the kwargs, as a broker before issue 28 sent it: the instance's kwargs are the same.
    await start(nats_client, envhost.host_id, session_id, record=True, kwargs_json='{"endless": true}')
    link = await open_link(envhost.step_address, session_id)
    await link.reset(seed=3)
    for _ in range(99):
        await link.step(0)
    stop = await stop_session(nats_client, envhost.host_id, session_id)  # at once: events are still gathered
    assert stop.stopped

    sub = await js.subscribe(f"platform.session.{session_id}.>", ordered_consumer=True)
    kinds: list[str] = []
    sizes: list[int] = []
    events: list[bus_pb.StepEvent] = []
    while not kinds or kinds[-1] != "lifecycle:closed":
        message = await sub.next_msg(timeout=15)
        if message.subject == subjects.session_lifecycle(session_id):
            kind = bus_pb.SessionEvent.FromString(message.data).kind
            kinds.append("lifecycle:closed" if kind == bus_pb.SESSION_EVENT_KIND_CLOSED else "lifecycle")
        else:
            assert message.subject == subjects.session_step_batches(session_id)
            kinds.append("batch")
            sizes.append(len(events_of(message)))
            events.extend(events_of(message))
    await sub.unsubscribe()
    assert kinds == ["lifecycle"] + ["batch"] * len(sizes) + ["lifecycle:closed"]  # STARTED, steps, CLOSED
    assert [e.seq for e in events] == list(range(1, len(events) + 1))  # each restart adds a reset
    assert sum(e.WhichOneof("kind") == "step" for e in events) == 99
    # Full at 64 events, or sent 50 ms after its first: a batch per ~50 ms of stepping at most.
    assert max(sizes) <= 64 and len(sizes) < len(events) / 2, sizes
