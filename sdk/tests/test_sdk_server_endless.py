"""Auto-reset steps and endless environments (time limits off, restarts in place)."""

from __future__ import annotations

import json
from typing import Any

import gymnasium
import numpy as np
import platform_testing.env_server_client as helpers
import pytest
from gymnasium.wrappers import TimeLimit
from platform_contracts.spaces import decode_value
from platform_contracts.values import dict_from_datamap
from platform_sdk.server.errors import StartupError
from platform_sdk.server.factory import build_env
from platform_sdk.server.instance import EnvInstance
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb

LEFT = pb.Value(discrete=0)


def _reset(instance: EnvInstance, seed: int = 0) -> env_pb.ResetResponse:
    response = instance.handle(env_pb.EnvRequest(id=1, reset=env_pb.ResetRequest(seed=seed)))
    assert not response.HasField("error"), response.error
    return response.reset


def _step(instance: EnvInstance, action: pb.Value, **options: Any) -> env_pb.StepResponse:
    response = instance.handle(env_pb.EnvRequest(id=2, step=env_pb.StepRequest(action=action, **options)))
    assert not response.HasField("error"), response.error
    return response.step


def _obs(value: pb.Value) -> np.ndarray:
    return np.asarray(decode_value(value))


def _has_time_limit(env: Any) -> bool:
    while isinstance(env, gymnasium.Wrapper):
        if isinstance(env, TimeLimit):
            return True
        env = env.env
    return False


def test_auto_reset_step_resets_and_keeps_the_ending() -> None:
    instance = EnvInstance(gymnasium.make("CartPole-v1", render_mode="rgb_array"), "CartPole-v1")
    twin = gymnasium.make("CartPole-v1")  # the same seed and actions, in process
    _reset(instance, seed=4)
    twin.reset(seed=4)
    for _ in range(100):
        step = _step(instance, LEFT, auto_reset=True, render=True)
        final, _, terminated, _, _ = twin.step(0)
        if terminated:
            break
        assert not step.HasField("auto_reset")
        np.testing.assert_array_equal(_obs(step.observation), final)
    assert terminated and step.terminated and not step.truncated  # the flags stay as the env said
    ended = step.auto_reset
    assert ended.terminated and not ended.truncated
    np.testing.assert_array_equal(_obs(ended.final_observation), final)
    start, _ = twin.reset()  # the next episode, from the same RNG
    np.testing.assert_array_equal(_obs(step.observation), start)
    assert ended.final_frame.encoding == "jpeg" and step.frame.encoding == "jpeg"
    assert ended.final_frame.data != step.frame.data  # the fallen pole, then the new start
    # and it goes on in the new episode
    np.testing.assert_array_equal(_obs(_step(instance, LEFT).observation), twin.step(0)[0])


def test_without_auto_reset_an_ending_step_is_plain_gymnasium() -> None:
    instance = EnvInstance(gymnasium.make("CartPole-v1"), "CartPole-v1")
    _reset(instance, seed=0)
    steps = [_step(instance, LEFT)]
    while not steps[-1].terminated and len(steps) < 30:
        steps.append(_step(instance, LEFT))
    assert steps[-1].terminated and not any(s.HasField("auto_reset") for s in steps)
    assert abs(_obs(steps[-1].observation)[2]) > 0.2  # the fallen pole, not a new start


def test_a_truncating_auto_reset_keeps_the_final_info() -> None:
    env = gymnasium.make("Pendulum-v1", max_episode_steps=3)
    instance = EnvInstance(env, "Pendulum-v1")
    _reset(instance, seed=0)
    torque = pb.Value()
    torque.tensor.CopyFrom(pb.Tensor(dtype="float32", shape=[1], data=np.zeros(1, np.float32).tobytes()))
    steps = [_step(instance, torque, auto_reset=True) for _ in range(3)]
    assert [s.HasField("auto_reset") for s in steps] == [False, False, True]
    assert steps[-1].truncated and steps[-1].auto_reset.truncated and not steps[-1].auto_reset.terminated
    assert dict_from_datamap(steps[-1].auto_reset.final_info) == {}
    assert not _step(instance, torque).truncated  # a new episode: its limit starts again


def test_endless_cartpole_restarts_in_place() -> None:
    env, env_id = build_env("CartPole-v1", endless=True)
    assert not _has_time_limit(env)
    instance = EnvInstance(env, env_id, endless=True)
    assert instance.handle(env_pb.EnvRequest(id=1, spec=env_pb.SpecRequest())).spec.endless
    _reset(instance, seed=0)
    steps = [_step(instance, LEFT) for _ in range(12)]
    restarted = [s for s in steps if s.HasField("auto_reset")]
    assert len(restarted) == 1  # always pushing left, the pole falls within a dozen steps
    step = restarted[0]
    assert not step.terminated and not step.truncated
    assert step.auto_reset.terminated and not step.auto_reset.truncated
    assert abs(_obs(step.auto_reset.final_observation)[2]) > 0.2
    assert np.all(np.abs(_obs(step.observation)) <= 0.05)  # a fresh start


def test_endless_cartpole_runs_past_500_steps() -> None:
    env, env_id = build_env("CartPole-v1", endless=True)
    instance = EnvInstance(env, env_id, endless=True)
    observation = _obs(_reset(instance, seed=1).observation)
    for _ in range(600):  # a balancing controller: push towards where the pole leans
        _, _, angle, velocity = observation
        step = _step(instance, pb.Value(discrete=int(angle + 0.5 * velocity > 0)))
        assert not step.HasField("auto_reset") and not step.truncated and not step.terminated
        observation = _obs(step.observation)


def test_a_plain_cartpole_is_still_truncated_at_500() -> None:
    env, _ = build_env("CartPole-v1")
    assert _has_time_limit(env) and env.spec.max_episode_steps == 500


def test_endless_with_a_time_limit_kwarg_is_refused() -> None:
    with pytest.raises(StartupError, match="drop max_episode_steps"):
        build_env("CartPole-v1", kwargs={"max_episode_steps": 10}, endless=True)


def test_a_factory_time_limit_wrapper_is_taken_out() -> None:
    env, _ = build_env(factory="gymnasium:make", kwargs={"id": "CartPole-v1"}, endless=True)
    assert not _has_time_limit(env) and env.unwrapped.__class__.__name__ == "CartPoleEnv"


def test_the_endless_kwarg_through_the_server() -> None:
    args = ["--gym-id", "CartPole-v1", "--kwargs", json.dumps({"endless": True})]
    with helpers.ServerProcess(args) as server, helpers.EnvClient(server.address) as client:
        assert client.ok(spec=env_pb.SpecRequest()).spec.endless
        client.ok(reset=env_pb.ResetRequest(seed=0))
        steps = [client.ok(step=env_pb.StepRequest(action=LEFT)).step for _ in range(12)]
        assert sum(s.HasField("auto_reset") for s in steps) == 1
        assert not any(s.terminated for s in steps)
    result = helpers.run_server(["--gym-id", "CartPole-v1", "--kwargs", '{"endless": "yes"}'])
    assert result.returncode == 2
    assert "the 'endless' kwarg must be true or false, not 'yes'" in result.stderr
