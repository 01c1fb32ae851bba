"""Vector instances (`--num-envs N`) and `batch` requests."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import platform_testing.env_server_client as helpers
from platform_contracts.spaces import decode_value
from platform_sdk.server.instance import EnvInstance
from platform_sdk.server.vector import VectorInstance
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb


def _vector(count: int, env_id: str = "CartPole-v1") -> VectorInstance:
    return VectorInstance(
        [EnvInstance(gymnasium.make(env_id, render_mode="rgb_array"), env_id) for _ in range(count)]
    )


def _batch(*subs: tuple[int, dict[str, Any]]) -> env_pb.EnvRequest:
    request = env_pb.EnvRequest(id=50)
    for n, (index, command) in enumerate(subs):
        request.batch.requests.add(index=index, request=env_pb.EnvRequest(id=n + 1, **command))
    return request


def _reset(seed: int) -> dict[str, Any]:
    return {"reset": env_pb.ResetRequest(seed=seed)}


def _step(action: int, **options: Any) -> dict[str, Any]:
    return {"step": env_pb.StepRequest(action=pb.Value(discrete=action), **options)}


def _obs(value: pb.Value) -> np.ndarray:
    return np.asarray(decode_value(value))


def test_each_sub_environment_follows_its_own_requests() -> None:
    vector = _vector(4)
    twins = [gymnasium.make("CartPole-v1") for _ in range(4)]
    response = vector.handle(_batch(*[(i, _reset(seed=10 + i)) for i in range(4)]))
    assert response.id == 50 and [r.id for r in response.batch.responses] == [1, 2, 3, 4]
    for sub, twin, i in zip(response.batch.responses, twins, range(4), strict=True):
        np.testing.assert_array_equal(_obs(sub.reset.observation), twin.reset(seed=10 + i)[0])
    for _ in range(30):
        actions = [0, 1, 0, 1]
        response = vector.handle(_batch(*[(i, _step(a, auto_reset=True)) for i, a in enumerate(actions)]))
        for sub, twin, action in zip(response.batch.responses, twins, actions, strict=True):
            observation, reward, terminated, truncated, _ = twin.step(action)
            assert sub.step.reward == reward and sub.step.terminated == terminated
            if terminated or truncated:
                np.testing.assert_array_equal(_obs(sub.step.auto_reset.final_observation), observation)
                observation, _ = twin.reset()
            np.testing.assert_array_equal(_obs(sub.step.observation), observation)


def test_a_batch_may_skip_repeat_and_mix_commands() -> None:
    vector = _vector(3)
    vector.handle(_batch(*[(i, _reset(seed=i)) for i in range(3)]))
    hold = {"hold": env_pb.HoldRequest(action=pb.Value(discrete=1), steps=3)}
    response = vector.handle(
        _batch((2, _step(1)), (2, hold), (0, {"snapshot": env_pb.SnapshotRequest()}), (2, _step(0)))
    )
    step, held, snapshot, again = response.batch.responses
    assert not any(r.HasField("error") for r in response.batch.responses)
    assert (
        step.step.reward == 1.0
        and held.hold.steps == 3
        and snapshot.snapshot.handle == "snap-1"
        and again.step.reward == 1.0
    )
    twin = gymnasium.make("CartPole-v1")
    twin.reset(seed=2)
    for action in (1, 1, 1, 1, 0):
        expected = twin.step(action)[0]
    np.testing.assert_array_equal(_obs(again.step.observation), expected)


def test_a_bad_index_or_a_nested_batch_fails_alone() -> None:
    vector = _vector(2)
    nested = {"batch": env_pb.BatchRequest()}
    response = vector.handle(
        _batch((0, _reset(seed=0)), (5, _reset(seed=1)), (1, nested), (1, _reset(seed=2)))
    )
    first, out_of_range, nested_answer, last = response.batch.responses
    assert not first.HasField("error") and not last.HasField("error")
    assert out_of_range.id == 2 and out_of_range.error.code == env_pb.ERROR_CODE_INVALID_ARGUMENT
    assert out_of_range.error.message == "sub-environment 5 does not exist: this instance has 2 (0 to 1)"
    assert nested_answer.error.code == env_pb.ERROR_CODE_INVALID_ARGUMENT
    assert nested_answer.error.message == "a batch cannot hold another batch"
    sub_error = vector.handle(_batch((1, _step(9))))
    assert sub_error.batch.responses[0].error.code == env_pb.ERROR_CODE_INVALID_ACTION
    empty = vector.handle(env_pb.EnvRequest(id=1, batch=env_pb.BatchRequest()))
    assert empty.HasField("batch") and len(empty.batch.responses) == 0


def test_plain_requests_go_to_sub_environment_0() -> None:
    vector = _vector(3)
    spec = vector.handle(env_pb.EnvRequest(id=1, spec=env_pb.SpecRequest())).spec
    assert spec.num_envs == 3 and spec.env_id == "CartPole-v1" and not spec.endless
    reset = vector.handle(env_pb.EnvRequest(id=2, reset=env_pb.ResetRequest(seed=7))).reset
    np.testing.assert_array_equal(_obs(reset.observation), gymnasium.make("CartPole-v1").reset(seed=7)[0])
    assert vector.subs[0].has_reset and not vector.subs[1].has_reset
    step = vector.handle(_batch((1, _step(0)))).batch.responses[0]
    assert step.error.code == env_pb.ERROR_CODE_FAILED_PRECONDITION  # sub-environment 1 was never reset
    sub_spec = vector.handle(_batch((2, {"spec": env_pb.SpecRequest()}))).batch.responses[0].spec
    assert sub_spec.num_envs == 1


def test_snapshots_belong_to_their_sub_environment() -> None:
    vector = _vector(2)
    vector.handle(_batch((0, _reset(seed=0)), (1, _reset(seed=1))))
    snap = (
        vector.handle(_batch((1, {"snapshot": env_pb.SnapshotRequest()}))).batch.responses[0].snapshot.handle
    )
    moved = vector.handle(_batch((1, _step(1)))).batch.responses[0].step
    restore = {"restore": env_pb.RestoreRequest(handle=snap)}
    restored = vector.handle(_batch((0, restore), (1, restore))).batch.responses
    assert restored[0].error.code == env_pb.ERROR_CODE_NOT_FOUND  # sub 0 has no snapshots
    again = vector.handle(_batch((1, _step(1)))).batch.responses[0].step
    np.testing.assert_array_equal(_obs(again.observation), _obs(moved.observation))


def test_close_closes_every_sub_environment() -> None:
    vector = _vector(2)
    assert vector.handle(env_pb.EnvRequest(id=1, close=env_pb.CloseRequest())).HasField("close")
    assert vector.closed and all(sub.closed for sub in vector.subs)
    again = vector.handle(env_pb.EnvRequest(id=2, close=env_pb.CloseRequest()))
    assert again.error.message == "the environment is closed"


def test_a_single_instance_answers_a_batch_for_index_0() -> None:
    instance = EnvInstance(gymnasium.make("CartPole-v1"), "CartPole-v1")
    assert instance.handle(env_pb.EnvRequest(id=1, spec=env_pb.SpecRequest())).spec.num_envs == 1
    response = instance.handle(_batch((0, _reset(seed=0)), (1, _reset(seed=1))))
    ok, missing = response.batch.responses
    assert ok.HasField("reset") and missing.error.code == env_pb.ERROR_CODE_INVALID_ARGUMENT


def test_num_envs_through_the_server() -> None:
    args = ["--gym-id", "CartPole-v1", "--num-envs", "3", "--kwargs", '{"endless": true}']
    with helpers.ServerProcess(args) as server, helpers.EnvClient(server.address) as client:
        spec = client.ok(spec=env_pb.SpecRequest()).spec
        assert spec.num_envs == 3 and spec.endless
        batch = _batch(*[(i, _reset(seed=i)) for i in range(3)]).batch
        resets = client.ok(batch=batch).batch.responses
        assert [_obs(r.reset.observation).tolist() for r in resets] == [
            gymnasium.make("CartPole-v1").reset(seed=i)[0].tolist() for i in range(3)
        ]
        for _ in range(15):  # pushing left: each pole falls and restarts in place
            steps = client.ok(batch=_batch(*[(i, _step(0)) for i in range(3)]).batch).batch.responses
            assert not any(s.step.terminated or s.HasField("error") for s in steps)
    result = helpers.run_server(["--gym-id", "CartPole-v1", "--num-envs", "0"])
    assert result.returncode == 2 and "--num-envs must be at least 1, not 0" in result.stderr
