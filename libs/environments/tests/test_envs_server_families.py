"""The environment server's instance (`platform_sdk.server.instance.EnvInstance`) hosting catalog
families: endless sessions without their time limits, a hold with Atari frames, and exported
states that carry on exactly. The server's own tests (sdk/tests) use classic control only."""

from __future__ import annotations

import math
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.wrappers import TimeLimit
from platform_contracts.spaces import decode_value
from platform_sdk.server.errors import StartupError
from platform_sdk.server.factory import build_env
from platform_sdk.server.instance import EnvInstance
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb

DMC = "platform_envs.adapters.dmc:make_env"
ATARI = "platform_envs.adapters.atari:make_env"
GYM_MUJOCO = "platform_envs.adapters.gym_mujoco:make_env"


def _ok(instance: EnvInstance, **command: Any) -> env_pb.EnvResponse:
    response = instance.handle(env_pb.EnvRequest(id=7, **command))
    assert not response.HasField("error"), response.error
    return response


def _instance(factory: str, endless: bool = False, **kwargs: Any) -> EnvInstance:
    env, env_id = build_env(factory=factory, kwargs=kwargs, endless=endless)
    return EnvInstance(env, env_id, endless=endless)


def _tensor(values: list[float]) -> pb.Value:
    array = np.asarray(values, dtype="float64")
    return pb.Value(tensor=pb.Tensor(dtype="float64", shape=list(array.shape), data=array.tobytes()))


def _flat(value: pb.Value) -> np.ndarray:
    decoded = decode_value(value)
    if isinstance(decoded, dict):
        return np.concatenate([np.ravel(decoded[k]) for k in sorted(decoded)])
    return np.asarray(decoded, dtype=np.float64).ravel()


def _has_time_limit(env: Any) -> bool:
    while isinstance(env, gymnasium.Wrapper):
        if isinstance(env, TimeLimit):
            return True
        env = env.env
    return False


def test_endless_dmc_holds_past_its_task_limit() -> None:
    instance = _instance(DMC, endless=True, domain="cartpole", task="balance")
    assert instance.env.metadata["time_limit"] is None
    _ok(instance, reset=env_pb.ResetRequest(seed=0))
    hold = env_pb.HoldRequest(action=_tensor([0.0]), steps=1200, keep_steps=True)
    held = _ok(instance, hold=hold).hold
    assert held.steps == 1200  # the task's own limit is 1000 steps (10 s)
    assert not any(kept.HasField("auto_reset") for kept in held.kept)
    instance.close()


def test_endless_gym_mujoco_and_atari_have_no_time_limit() -> None:
    mujoco_env, _ = build_env(factory=GYM_MUJOCO, kwargs={"task": "InvertedPendulum"}, endless=True)
    assert not _has_time_limit(mujoco_env)
    mujoco_env.close()
    pong, _ = build_env(factory=ATARI, kwargs={"game": "pong"}, endless=True)
    assert pong.unwrapped.max_episode_steps == math.inf and pong.metadata["max_episode_steps"] is None
    pong.close()


def test_endless_with_the_task_time_limit_kwarg_is_refused() -> None:
    with pytest.raises(StartupError, match="drop time_limit"):
        build_env(factory=DMC, kwargs={"domain": "cartpole", "task": "balance", "time_limit": 5}, endless=True)


def test_pong_hold_with_frames() -> None:
    instance = _instance(ATARI, game="pong")
    _ok(instance, reset=env_pb.ResetRequest(seed=0))
    held = _ok(instance, hold=env_pb.HoldRequest(action=pb.Value(discrete=0), steps=8, frames=True)).hold
    assert held.steps == 8 and len(held.frames) == 8
    assert (held.frames[0].width, held.frames[0].height) == (160, 210)
    assert np.asarray(decode_value(held.observation)).shape == (210, 160, 3)
    instance.close()


@pytest.mark.parametrize(
    ("factory", "kwargs", "action"),
    [
        pytest.param(DMC, {"domain": "cartpole", "task": "swingup"}, _tensor([0.3]), id="dmc-cartpole-swingup"),
        pytest.param(ATARI, {"game": "pong"}, pb.Value(discrete=2), id="pong"),
    ],
)
def test_an_exported_state_carries_on_exactly_in_another_instance(factory: str, kwargs: dict[str, Any],
                                                                   action: pb.Value) -> None:
    original, fresh = _instance(factory, **kwargs), _instance(factory, **kwargs)
    _ok(original, reset=env_pb.ResetRequest(seed=11))
    for _ in range(3):
        _ok(original, step=env_pb.StepRequest(action=action))
    state = _ok(original, export_state=env_pb.ExportStateRequest()).export_state
    assert state.format == "pickle"
    _ok(fresh, import_state=env_pb.ImportStateRequest(state=state.state, format=state.format))
    for _ in range(4):
        ahead = _ok(original, step=env_pb.StepRequest(action=action)).step
        behind = _ok(fresh, step=env_pb.StepRequest(action=action)).step
        np.testing.assert_array_equal(_flat(ahead.observation), _flat(behind.observation))
        assert (ahead.reward, ahead.terminated) == (behind.reward, behind.terminated)
    original.close()
    fresh.close()
