"""`hold`: one action repeated in one request, against real environments."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import pytest
from platform_contracts.spaces import decode_value
from platform_sdk.server.factory import build_env
from platform_sdk.server.instance import EnvInstance
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb


def _cartpole(**kwargs: Any) -> EnvInstance:
    return EnvInstance(gymnasium.make("CartPole-v1", render_mode="rgb_array"), "CartPole-v1", **kwargs)


def _reset(instance: EnvInstance, seed: int = 0) -> env_pb.EnvResponse:
    response = instance.handle(env_pb.EnvRequest(id=1, reset=env_pb.ResetRequest(seed=seed)))
    assert not response.HasField("error"), response.error
    return response


def _hold(instance: EnvInstance, action: pb.Value, steps: int, **options: Any) -> env_pb.EnvResponse:
    return instance.handle(
        env_pb.EnvRequest(id=3, hold=env_pb.HoldRequest(action=action, steps=steps, **options))
    )


def _ok_hold(instance: EnvInstance, action: pb.Value, steps: int, **options: Any) -> env_pb.HoldResponse:
    response = _hold(instance, action, steps, **options)
    assert response.id == 3 and not response.HasField("error"), response.error
    return response.hold


def _step(instance: EnvInstance, action: pb.Value, **options: Any) -> env_pb.StepResponse:
    response = instance.handle(env_pb.EnvRequest(id=2, step=env_pb.StepRequest(action=action, **options)))
    assert not response.HasField("error"), response.error
    return response.step


def _observation(value: pb.Value) -> np.ndarray:
    return np.asarray(decode_value(value))


RIGHT = pb.Value(discrete=1)


def test_a_hold_is_the_same_as_single_steps() -> None:
    held, stepped = _cartpole(), _cartpole()
    _reset(held, seed=3), _reset(stepped, seed=3)
    result = _ok_hold(held, RIGHT, 4)
    steps = [_step(stepped, RIGHT) for _ in range(4)]
    assert result.steps == 4 and list(result.rewards) == [s.reward for s in steps] == [1.0] * 4
    assert not result.terminated and not result.truncated and len(result.frames) == 0
    np.testing.assert_array_equal(_observation(result.observation), _observation(steps[-1].observation))
    # the environment goes on from where the hold left it
    np.testing.assert_array_equal(
        _observation(_step(held, RIGHT).observation), _observation(_step(stepped, RIGHT).observation)
    )


def test_a_hold_stops_when_the_episode_ends_and_does_not_reset() -> None:
    instance = _cartpole()
    _reset(instance, seed=0)
    result = _ok_hold(instance, RIGHT, 500, keep_steps=True)
    assert 1 < result.steps < 50 and len(result.rewards) == result.steps == len(result.kept)
    assert result.terminated and not result.truncated
    assert [k.terminated for k in result.kept] == [False] * (result.steps - 1) + [True]
    assert not any(k.HasField("auto_reset") for k in result.kept)
    final = _observation(result.observation)
    np.testing.assert_array_equal(final, _observation(result.kept[-1].observation))
    assert abs(final[2]) > 0.2  # the pole has fallen: no fresh start
    np.testing.assert_array_equal(final, instance.env.unwrapped.state.astype(np.float32))


def test_kept_steps_match_single_steps_with_their_frames() -> None:
    env_id = "Pendulum-v1"
    held = EnvInstance(gymnasium.make(env_id, render_mode="rgb_array"), env_id)
    stepped = EnvInstance(gymnasium.make(env_id, render_mode="rgb_array"), env_id)
    _reset(held, seed=5), _reset(stepped, seed=5)
    torque = pb.Value()
    torque.tensor.CopyFrom(pb.Tensor(dtype="float64", shape=[1], data=np.array([0.5]).tobytes()))
    result = _ok_hold(held, torque, 6, frames=True, keep_steps=True)
    singles = [_step(stepped, torque, render=True) for _ in range(6)]
    assert result.steps == 6 and len(result.frames) == 6 == len(result.kept)
    for kept, frame, single in zip(result.kept, result.frames, singles, strict=True):
        np.testing.assert_array_equal(_observation(kept.observation), _observation(single.observation))
        assert kept.reward == single.reward and frame.encoding == "jpeg" and frame.data[:2] == b"\xff\xd8"
        assert kept.frame == frame and frame.data == single.frame.data
    assert list(result.rewards) == [s.reward for s in singles]


@pytest.mark.parametrize("steps", [0, 10_001])
def test_hold_steps_outside_1_to_10000_are_refused(steps: int) -> None:
    instance = _cartpole()
    _reset(instance)
    response = _hold(instance, RIGHT, steps)
    assert response.error.code == env_pb.ERROR_CODE_INVALID_ARGUMENT
    assert response.error.message == f"hold steps must be between 1 and 10000, not {steps}"


def test_frames_are_limited_to_256_steps() -> None:
    instance = _cartpole()
    _reset(instance)
    response = _hold(instance, RIGHT, 257, frames=True)
    assert response.error.code == env_pb.ERROR_CODE_INVALID_ARGUMENT
    assert "256" in response.error.message and "frames=False" in response.error.message
    assert _ok_hold(instance, RIGHT, 256, frames=True).steps >= 1


def test_a_long_hold_without_frames() -> None:
    env, env_id = build_env("Pendulum-v1", endless=True)  # no 200-step time limit
    instance = EnvInstance(env, env_id, endless=True)
    _reset(instance)
    torque = pb.Value()
    torque.tensor.CopyFrom(pb.Tensor(dtype="float32", shape=[1], data=np.array([0.0], np.float32).tobytes()))
    result = _ok_hold(instance, torque, 10_000)
    assert result.steps == 10_000 and len(result.rewards) == 10_000
    assert not result.terminated and not result.truncated


def test_a_bad_action_or_no_reset_fails_like_step() -> None:
    instance = _cartpole()
    response = _hold(instance, RIGHT, 3)
    assert response.error.code == env_pb.ERROR_CODE_FAILED_PRECONDITION
    assert response.error.message == "hold before the first reset: call reset first"
    _reset(instance)
    before = instance.env.unwrapped.state.copy()
    response = _hold(instance, pb.Value(discrete=7), 3)
    assert response.error.code == env_pb.ERROR_CODE_INVALID_ACTION and "Discrete(2)" in response.error.message
    np.testing.assert_array_equal(instance.env.unwrapped.state, before)  # nothing was stepped


def test_frames_from_an_env_without_frames_are_unimplemented() -> None:
    instance = EnvInstance(gymnasium.make("CartPole-v1"), "CartPole-v1")
    _reset(instance, seed=1)
    before = instance.env.unwrapped.state.copy()
    response = _hold(instance, RIGHT, 3, frames=True)
    assert response.error.code == env_pb.ERROR_CODE_UNIMPLEMENTED
    np.testing.assert_array_equal(instance.env.unwrapped.state, before)  # refused before stepping


def test_an_endless_hold_goes_on_through_restarts() -> None:
    env, env_id = build_env("CartPole-v1", endless=True)
    instance = EnvInstance(env, env_id, endless=True)
    _reset(instance, seed=0)
    result = _ok_hold(instance, RIGHT, 100, keep_steps=True, frames=True)
    assert result.steps == 100 and len(result.frames) == 100
    assert not result.terminated and not result.truncated
    restarts = [k for k in result.kept if k.HasField("auto_reset")]
    assert len(restarts) >= 3  # always pushing right: the pole falls every ten-odd steps
    for kept in restarts:
        assert not kept.terminated and not kept.truncated
        assert kept.auto_reset.terminated and not kept.auto_reset.truncated
        assert abs(_observation(kept.auto_reset.final_observation)[2]) > 0.2
        assert np.all(np.abs(_observation(kept.observation)) <= 0.05)  # a fresh start
        assert kept.auto_reset.final_frame.encoding == "jpeg" and kept.frame.encoding == "jpeg"