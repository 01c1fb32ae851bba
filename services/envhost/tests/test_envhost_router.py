"""The router's byte-level request changes (no instance needed)."""

from __future__ import annotations

from platform_envhost.router import ask_for_frame
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as values_pb


def _with_frame(request: env_pb.EnvRequest) -> env_pb.EnvRequest:
    return env_pb.EnvRequest.FromString(ask_for_frame(request, request.SerializeToString()))


def test_a_step_asks_for_its_frame_and_keeps_everything_else() -> None:
    request = env_pb.EnvRequest(id=7, trace_context={"traceparent": "00-x"})
    request.step.action.CopyFrom(values_pb.Value(discrete=1))
    request.step.agent.SetInParent()
    changed = _with_frame(request)
    assert changed.step.render
    changed.step.render = False
    assert changed == request


def test_a_reset_asks_for_its_frame() -> None:
    request = env_pb.EnvRequest(id=3, reset=env_pb.ResetRequest(seed=5))
    changed = _with_frame(request)
    assert changed.reset.render and changed.reset.seed == 5 and changed.id == 3


def test_other_commands_and_frames_already_asked_for_are_unchanged() -> None:
    for request in (
        env_pb.EnvRequest(id=1, snapshot=env_pb.SnapshotRequest()),
        env_pb.EnvRequest(id=2, step=env_pb.StepRequest(render=True)),
    ):
        raw = request.SerializeToString()
        assert ask_for_frame(request, raw) is raw
