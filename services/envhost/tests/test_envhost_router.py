"""The router's request changes, by appended bytes or re-encoding (no instance needed)."""

from __future__ import annotations

from platform_envhost.batches import ask_to_record
from platform_envhost.holds import keep_steps_suffix
from platform_envhost.later_frames import RENDER_LATER, asks_render_later
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as values_pb


def _rendering_later(request: env_pb.EnvRequest) -> env_pb.EnvRequest:
    assert asks_render_later(request, record_frames=True)
    raw = request.SerializeToString() + RENDER_LATER[request.WhichOneof("command") or ""]
    return env_pb.EnvRequest.FromString(raw)


def test_a_step_asks_to_render_later_and_keeps_everything_else() -> None:
    request = env_pb.EnvRequest(id=7, trace_context={"traceparent": "00-x"})
    request.step.action.CopyFrom(values_pb.Value(discrete=1))
    request.step.agent.SetInParent()
    changed = _rendering_later(request)
    assert changed.step.render_later and not changed.step.render
    changed.step.render_later = False
    assert changed == request


def test_a_reset_asks_to_render_later() -> None:
    request = env_pb.EnvRequest(id=3, reset=env_pb.ResetRequest(seed=5))
    changed = _rendering_later(request)
    assert changed.reset.render_later and changed.reset.seed == 5 and changed.id == 3


def test_other_commands_frames_already_asked_for_and_unrecorded_frames_ask_nothing() -> None:
    for request in (
        env_pb.EnvRequest(id=1, snapshot=env_pb.SnapshotRequest()),
        env_pb.EnvRequest(id=2, step=env_pb.StepRequest(render=True)),
        env_pb.EnvRequest(id=3, reset=env_pb.ResetRequest(render=True)),
    ):
        assert not asks_render_later(request, record_frames=True)
    assert not asks_render_later(env_pb.EnvRequest(step=env_pb.StepRequest()), record_frames=False)


def test_a_recorded_hold_asks_to_keep_its_steps_by_appending_bytes() -> None:
    request = env_pb.EnvRequest(id=4, trace_context={"traceparent": "00-y"})
    request.hold.action.CopyFrom(values_pb.Value(discrete=1))
    request.hold.steps = 9
    request.hold.agent.fields["x"].number = 1.0
    for frames in (False, True):
        changed = env_pb.EnvRequest.FromString(request.SerializeToString() + keep_steps_suffix(frames))
        assert changed.hold.keep_steps and changed.hold.frames is frames
        changed.hold.keep_steps = changed.hold.frames = False
        assert changed == request


def test_a_batch_is_re_encoded_only_when_recording_needs_more_than_it_asks() -> None:
    plain = env_pb.EnvRequest(id=1)
    for index in range(3):
        plain.batch.requests.add(index=index).request.step.action.discrete = 0
    raw = plain.SerializeToString()
    assert ask_to_record(raw, plain.batch.requests, record_frames=False) is None

    framed = ask_to_record(raw, plain.batch.requests, record_frames=True)
    assert framed is not None and framed.strip == []
    assert [sub.request.step.render for sub in env_pb.EnvRequest.FromString(framed.raw).batch.requests] == [True] * 3

    holds = env_pb.EnvRequest(id=2)
    holds.batch.requests.add(index=0).request.hold.steps = 300
    holds.batch.requests.add(index=1).request.hold.CopyFrom(env_pb.HoldRequest(steps=3, keep_steps=True))
    holds.batch.requests.add(index=2).request.hold.CopyFrom(env_pb.HoldRequest(steps=3, frames=True))
    asked = ask_to_record(holds.SerializeToString(), holds.batch.requests, record_frames=True)
    assert asked is not None and asked.strip == [0, 1, 2]
    changed = [sub.request.hold for sub in env_pb.EnvRequest.FromString(asked.raw).batch.requests]
    assert [(h.keep_steps, h.frames) for h in changed] == [(True, False), (True, True), (True, True)]
