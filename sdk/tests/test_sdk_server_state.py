"""`export_state` / `import_state` (the bytes behind saved snapshots), and the saved-snapshot
commands an environment server leaves to the env host."""

from __future__ import annotations

import pickle
import threading
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
import pytest
from platform_contracts.spaces import decode_value
from platform_sdk.server.instance import EnvInstance
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb


def _call(instance: EnvInstance, **command: Any) -> env_pb.EnvResponse:
    return instance.handle(env_pb.EnvRequest(id=9, **command))


def _ok(instance: EnvInstance, **command: Any) -> env_pb.EnvResponse:
    response = _call(instance, **command)
    assert not response.HasField("error"), response.error
    return response


def _flat(value: pb.Value) -> np.ndarray:
    decoded = decode_value(value)
    if isinstance(decoded, dict):
        return np.concatenate([np.ravel(decoded[k]) for k in sorted(decoded)])
    return np.asarray(decoded, dtype=np.float64).ravel()


def _tensor(values: list[float], dtype: str = "float64") -> pb.Value:
    array = np.asarray(values, dtype=dtype)
    return pb.Value(tensor=pb.Tensor(dtype=dtype, shape=list(array.shape), data=array.tobytes()))


def _gym(env_id: str) -> Callable[[], EnvInstance]:
    return lambda: EnvInstance(gymnasium.make(env_id, render_mode="rgb_array"), env_id)


CASES = [
    pytest.param(_gym("CartPole-v1"), pb.Value(discrete=1), id="cartpole"),
    pytest.param(_gym("Pendulum-v1"), _tensor([0.7], "float32"), id="pendulum"),
]


@pytest.mark.parametrize(("make", "action"), CASES)
def test_an_imported_state_carries_on_exactly(make: Callable[[], EnvInstance], action: pb.Value) -> None:
    original = make()
    _ok(original, reset=env_pb.ResetRequest(seed=11))
    for _ in range(3):  # one action throughout: few enough steps that the cart pole stands
        _ok(original, step=env_pb.StepRequest(action=action))
    exported = _ok(original, export_state=env_pb.ExportStateRequest()).export_state
    assert exported.format == "pickle" and len(exported.state) > 0
    continued = [_ok(original, step=env_pb.StepRequest(action=action)).step for _ in range(4)]

    fresh = make()  # another instance, never reset: the import is its start
    imported = _ok(fresh, import_state=env_pb.ImportStateRequest(state=exported.state, format="pickle"))
    replayed = [_ok(fresh, step=env_pb.StepRequest(action=action)).step for _ in range(4)]
    assert imported.import_state.HasField("observation")
    assert imported.import_state.HasField("seconds") and imported.import_state.seconds > 0  # the load's time
    for a, b in zip(continued, replayed, strict=True):
        np.testing.assert_array_equal(_flat(a.observation), _flat(b.observation))
        assert a.reward == b.reward and a.terminated == b.terminated
    original.close()
    fresh.close()


def test_import_answers_the_observation_at_that_moment() -> None:
    source, target = _gym("CartPole-v1")(), _gym("CartPole-v1")()
    _ok(source, reset=env_pb.ResetRequest(seed=2))
    last = _ok(source, step=env_pb.StepRequest(action=pb.Value(discrete=0))).step
    state = _ok(source, export_state=env_pb.ExportStateRequest()).export_state.state
    _ok(target, reset=env_pb.ResetRequest(seed=99))
    no_format = env_pb.ImportStateRequest(state=state)  # "" reads as "pickle"
    imported = _ok(target, import_state=no_format).import_state
    np.testing.assert_array_equal(_flat(imported.observation), _flat(last.observation))
    assert _ok(target, render=env_pb.RenderRequest()).render.frame.encoding == "jpeg"


def test_bytes_that_do_not_unpickle_are_refused() -> None:
    instance = _gym("CartPole-v1")()
    _ok(instance, reset=env_pb.ResetRequest(seed=0))
    for state in (b"not a pickle", pickle.dumps({"a": 1})):
        response = _call(instance, import_state=env_pb.ImportStateRequest(state=state, format="pickle"))
        assert response.error.code == env_pb.ERROR_CODE_INVALID_ARGUMENT
        assert response.error.message.startswith("the state is not an exported state of CartPole-v1")
    assert _ok(instance, step=env_pb.StepRequest(action=pb.Value(discrete=0))).step.reward == 1.0


def test_a_state_of_another_environment_is_refused() -> None:
    pendulum, cartpole = _gym("Pendulum-v1")(), _gym("CartPole-v1")()
    _ok(pendulum, reset=env_pb.ResetRequest(seed=0))
    state = _ok(pendulum, export_state=env_pb.ExportStateRequest()).export_state.state
    response = _call(cartpole, import_state=env_pb.ImportStateRequest(state=state))
    assert response.error.code == env_pb.ERROR_CODE_INVALID_ARGUMENT
    assert "PendulumEnv" in response.error.message and "CartPoleEnv" in response.error.message
    assert _call(cartpole, step=env_pb.StepRequest(action=pb.Value(discrete=0))).error.code == (
        env_pb.ERROR_CODE_FAILED_PRECONDITION  # still never reset: the refused import changed nothing
    )


def test_bad_format_empty_state_and_export_before_reset() -> None:
    instance = _gym("CartPole-v1")()
    response = _call(instance, export_state=env_pb.ExportStateRequest())
    assert response.error.code == env_pb.ERROR_CODE_FAILED_PRECONDITION
    assert response.error.message == "export_state before the first reset: call reset first"
    response = _call(instance, import_state=env_pb.ImportStateRequest(state=b"x", format="json"))
    assert response.error.code == env_pb.ERROR_CODE_INVALID_ARGUMENT
    assert response.error.message == "unknown state format 'json': expected 'pickle'"
    response = _call(instance, import_state=env_pb.ImportStateRequest())
    assert (
        response.error.code == env_pb.ERROR_CODE_INVALID_ARGUMENT and "has no state" in response.error.message
    )


class _WithALock(gymnasium.Env):
    observation_space = gymnasium.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self) -> None:
        self.lock = threading.Lock()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {}


def test_an_env_that_cannot_be_saved_says_so() -> None:
    instance = EnvInstance(_WithALock(), "locked")
    _ok(instance, reset=env_pb.ResetRequest())
    response = _call(instance, export_state=env_pb.ExportStateRequest())
    assert response.error.code == env_pb.ERROR_CODE_UNIMPLEMENTED
    assert response.error.message.startswith("locked cannot be saved:") and "lock" in response.error.message


@pytest.mark.parametrize(
    "command",
    [
        {"save_snapshot": env_pb.SaveSnapshotRequest(label="x")},
        {"restore_saved": env_pb.RestoreSavedRequest(id="abc")},
    ],
)
def test_saved_snapshots_are_served_by_the_env_host(command: dict[str, Any]) -> None:
    instance = _gym("CartPole-v1")()
    _ok(instance, reset=env_pb.ResetRequest(seed=0))
    response = _call(instance, **command)
    assert response.error.code == env_pb.ERROR_CODE_UNIMPLEMENTED
    assert "served by the env host" in response.error.message
