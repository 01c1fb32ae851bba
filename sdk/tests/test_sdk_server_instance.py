"""`EnvInstance`: requests in, responses out, without gRPC."""

from __future__ import annotations

import threading
from typing import Any, ClassVar

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces as gs
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from platform_contracts.tracing import inject_dict
from platform_contracts.values import datamap_from_dict, dict_from_datamap
from platform_sdk.server.errors import StartupError
from platform_sdk.server.instance import EnvInstance, jsonable_metadata
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb


class _Exploding(gymnasium.Env):
    """Steps raise after the first; an unpicklable lock rides along."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": [],
        "render_fps": 4,
        "callback": print,
        "inf": float("inf"),
    }
    observation_space = gs.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gs.Discrete(2)

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.steps = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {"options": options}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        self.steps += 1
        if self.steps > 1:
            raise RuntimeError("the simulator diverged")
        return np.ones(2, np.float32), 1.0, False, False, {"n": self.steps}


def _req(**command: Any) -> env_pb.EnvRequest:
    return env_pb.EnvRequest(id=7, **command)


def _step(action: int = 1) -> env_pb.EnvRequest:
    return _req(step=env_pb.StepRequest(action=pb.Value(discrete=action)))


def test_spec_metadata_keeps_only_jsonable_parts() -> None:
    instance = EnvInstance(_Exploding(), "exploding")
    response = instance.handle(_req(spec=env_pb.SpecRequest()))
    assert response.id == 7 and response.spec.env_id == "exploding"
    assert response.spec.action_space.discrete.n == 2
    assert dict_from_datamap(response.spec.metadata) == {"render_modes": [], "render_fps": 4}
    assert jsonable_metadata({"a": [1, {"b": np.int64(2)}], "c": object()}) == {"a": [1, {"b": 2}]}


def test_reset_options_and_env_exceptions() -> None:
    instance = EnvInstance(_Exploding(), "exploding")
    options = env_pb.ResetRequest(seed=1)
    options.options.fields["level"].integer = 3
    response = instance.handle(_req(reset=options))
    assert dict_from_datamap(response.reset.info) == {"options": {"level": 3}}
    assert dict_from_datamap(instance.handle(_step()).step.info) == {"n": 1}
    failed = instance.handle(_step())
    assert failed.id == 7
    assert failed.error.code == env_pb.ERROR_CODE_INTERNAL
    assert failed.error.message == "RuntimeError: the simulator diverged"


def test_snapshot_of_an_unpicklable_env_is_unimplemented() -> None:
    instance = EnvInstance(_Exploding(), "exploding")
    instance.handle(_req(reset=env_pb.ResetRequest()))
    response = instance.handle(_req(snapshot=env_pb.SnapshotRequest()))
    assert response.error.code == env_pb.ERROR_CODE_UNIMPLEMENTED
    assert "cannot be pickled" in response.error.message and "lock" in response.error.message


def test_render_without_rgb_mode_and_an_empty_request() -> None:
    instance = EnvInstance(gymnasium.make("CartPole-v1"), "CartPole-v1")
    response = instance.handle(_req(render=env_pb.RenderRequest()))
    assert (
        response.error.code == env_pb.ERROR_CODE_UNIMPLEMENTED
        and "render_mode=None" in response.error.message
    )
    assert instance.handle(_req()).error.code == env_pb.ERROR_CODE_INVALID_ARGUMENT


def test_render_before_the_first_reset_is_a_failed_precondition() -> None:
    instance = EnvInstance(gymnasium.make("CartPole-v1", render_mode="rgb_array"), "CartPole-v1")
    response = instance.handle(_req(render=env_pb.RenderRequest()))
    assert response.error.code == env_pb.ERROR_CODE_FAILED_PRECONDITION
    assert response.error.message == "render before the first reset: call reset first"
    instance.handle(_req(reset=env_pb.ResetRequest(seed=0)))
    assert instance.handle(_req(render=env_pb.RenderRequest())).render.frame.width == 600


def test_reset_options_the_environment_refuses_are_an_invalid_argument() -> None:
    instance = EnvInstance(gymnasium.make("CartPole-v1"), "CartPole-v1")
    refused = instance.handle(_req(reset=env_pb.ResetRequest(options=datamap_from_dict({"low": "abc"}))))
    assert refused.error.code == env_pb.ERROR_CODE_INVALID_ARGUMENT
    assert refused.error.message.startswith("CartPole-v1: reset with options {'low': 'abc'} failed: ValueError")
    taken = instance.handle(_req(reset=env_pb.ResetRequest(options=datamap_from_dict({"low": -0.01}))))
    assert taken.HasField("reset")


def test_after_close_every_command_fails() -> None:
    instance = EnvInstance(gymnasium.make("CartPole-v1"), "CartPole-v1")
    instance.handle(_req(reset=env_pb.ResetRequest(seed=0)))
    assert instance.handle(_req(close=env_pb.CloseRequest())).HasField("close")
    for command in (_step(), _req(reset=env_pb.ResetRequest()), _req(close=env_pb.CloseRequest())):
        response = instance.handle(command)
        assert response.error.code == env_pb.ERROR_CODE_FAILED_PRECONDITION
        assert response.error.message == "the environment is closed"


def test_unsupported_spaces_fail_at_start() -> None:
    env = _Exploding()
    env.observation_space = gs.Text(5)
    with pytest.raises(StartupError, match="Text is not supported"):
        EnvInstance(env, "texty")


def test_spans_only_for_a_valid_trace_context() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instance = EnvInstance(gymnasium.make("CartPole-v1"), "CartPole-v1", tracer=provider.get_tracer("test"))
    instance.handle(_req(reset=env_pb.ResetRequest(seed=0)))
    instance.handle(env_pb.EnvRequest(id=1, trace_context={"traceparent": "garbage"}, step=_step().step))
    assert exporter.get_finished_spans() == ()
    parent = trace.NonRecordingSpan(
        trace.SpanContext(trace_id=0xABC, span_id=0xDEF, is_remote=True, trace_flags=trace.TraceFlags(1))
    )
    carrier = inject_dict(ctx=trace.set_span_in_context(parent))
    instance.handle(env_pb.EnvRequest(id=2, trace_context=carrier, step=_step(9).step))
    (span,) = exporter.get_finished_spans()
    assert span.name == "env.step" and span.context.trace_id == 0xABC and span.parent.span_id == 0xDEF
    assert span.attributes["env.error"] == "ERROR_CODE_INVALID_ACTION"


class _Labelled(gymnasium.Env):
    observation_space = gs.Box(-1.0, 1.0, (5,), np.float32)
    action_space = gs.Discrete(2)

    def __init__(self, labels: list[tuple[str, int, int]]) -> None:
        self.labels = labels

    def get_observation_labels(self) -> list[tuple[str, int, int]]:
        return self.labels


def test_spec_carries_observation_labels() -> None:
    instance = EnvInstance(_Labelled([("height", 0, 1), ("velocity", 1, 5)]), "labelled")
    spec = instance.handle(env_pb.EnvRequest(id=1, spec=env_pb.SpecRequest())).spec
    assert [(label.name, label.start, label.stop) for label in spec.observation_labels] == [
        ("height", 0, 1),
        ("velocity", 1, 5),
    ]


def test_labels_outside_the_observation_fail_at_start() -> None:
    with pytest.raises(StartupError, match="label 'velocity' covers \\[1, 9\\)"):
        EnvInstance(_Labelled([("velocity", 1, 9)]), "labelled")


@pytest.mark.parametrize(("gym_id", "rate"), [("CartPole-v1", 50.0), ("Pendulum-v1", 20.0), ("Acrobot-v1", 5.0)])
def test_control_rate_comes_from_the_time_step(gym_id: str, rate: float) -> None:
    spec = EnvInstance(gymnasium.make(gym_id), gym_id).handle(env_pb.EnvRequest(id=1, spec=env_pb.SpecRequest())).spec
    assert dict_from_datamap(spec.metadata)["control_rate"] == pytest.approx(rate)


def test_a_declared_control_rate_is_kept() -> None:
    env = gymnasium.make("CartPole-v1")
    env.unwrapped.metadata = {**env.unwrapped.metadata, "control_rate": 7.5}
    spec = EnvInstance(env, "cartpole").handle(env_pb.EnvRequest(id=1, spec=env_pb.SpecRequest())).spec
    assert dict_from_datamap(spec.metadata)["control_rate"] == 7.5
