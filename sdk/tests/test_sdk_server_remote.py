"""The environment server as a real process, over real gRPC (a lockstep `Connect` stream)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import platform_testing.env_server_client as helpers
import pytest
import simplejpeg
from platform_contracts.spaces import decode_value, encode_value, space_from_proto
from platform_contracts.values import tensor_from_array
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb


@pytest.fixture(scope="module")
def cartpole() -> Iterator[str]:
    with helpers.ServerProcess(["--gym-id", "CartPole-v1"]) as server:
        yield server.address


@pytest.fixture(scope="module")
def pendulum() -> Iterator[str]:
    with helpers.ServerProcess(["--gym-id", "Pendulum-v1", "--kwargs", '{"max_episode_steps": 8}']) as server:
        yield server.address


def _trajectory(client, seed: int, actions: list[pb.Value]) -> list[tuple[list[float], float, bool, bool]]:
    reset = client.ok(reset=env_pb.ResetRequest(seed=seed)).reset
    result = [(decode_value(reset.observation).tolist(), 0.0, False, False)]
    for action in actions:
        step = client.ok(step=env_pb.StepRequest(action=action)).step
        result.append((decode_value(step.observation).tolist(), step.reward, step.terminated, step.truncated))
    return result


def _steps(client, actions: list[pb.Value]) -> list[tuple[list[float], float, bool, bool]]:
    """Steps, resetting without a seed (from the env's RNG) after an episode ends."""
    result = []
    for action in actions:
        step = client.ok(step=env_pb.StepRequest(action=action)).step
        result.append((decode_value(step.observation).tolist(), step.reward, step.terminated, step.truncated))
        if step.terminated or step.truncated:
            reset = client.ok(reset=env_pb.ResetRequest()).reset
            result.append((decode_value(reset.observation).tolist(), 0.0, False, False))
    return result


def test_cartpole_spec_reset_step(cartpole: str) -> None:
    with helpers.EnvClient(cartpole) as client:
        spec = client.ok(spec=env_pb.SpecRequest()).spec
        assert spec.env_id == "CartPole-v1" and spec.render_mode == "rgb_array"
        assert spec.action_space.discrete.n == 2
        assert spec.metadata.fields["render_fps"].integer == 50
        observation_space = space_from_proto(spec.observation_space)
        reset = client.ok(reset=env_pb.ResetRequest(seed=42)).reset
        assert observation_space.contains(decode_value(reset.observation))
        assert not reset.HasField("frame")
        step = client.ok(step=env_pb.StepRequest(action=pb.Value(discrete=1))).step
        assert step.reward == 1.0 and not step.terminated and not step.truncated
        assert observation_space.contains(decode_value(step.observation))


def test_same_seed_same_actions_same_trajectory(cartpole: str) -> None:
    actions = [pb.Value(discrete=a) for a in [0, 1, 1, 0, 1, 0, 0, 1]]
    with helpers.EnvClient(cartpole) as client:
        first = _trajectory(client, 7, actions)
        second = _trajectory(client, 7, actions)
        other = _trajectory(client, 8, actions)
    assert first == second
    assert first != other


def test_pendulum_box_actions(pendulum: str) -> None:
    with helpers.EnvClient(pendulum) as client:
        spec = client.ok(spec=env_pb.SpecRequest()).spec
        action_space = space_from_proto(spec.action_space)
        assert action_space.shape == (1,) and action_space.dtype == np.float32
        actions = [encode_value(np.array([x], np.float32), action_space) for x in (-2.0, 0.5, 1.5)]
        first = _trajectory(client, 3, actions)
        assert first == _trajectory(client, 3, actions)
        assert all(-16.3 <= reward <= 0.0 for _, reward, _, _ in first)


def test_snapshot_restore_replays_across_the_time_limit(pendulum: str) -> None:
    space = None
    with helpers.EnvClient(pendulum) as client:
        space = space_from_proto(client.ok(spec=env_pb.SpecRequest()).spec.action_space)
        client.ok(reset=env_pb.ResetRequest(seed=11))
        for _ in range(5):
            client.ok(step=env_pb.StepRequest(action=encode_value(np.array([0.3], np.float32), space)))
        handle = client.ok(snapshot=env_pb.SnapshotRequest()).snapshot.handle
        assert handle
        last = client.ok(render=env_pb.RenderRequest())  # render resources exist when snapshotted
        assert last.render.frame.data
        actions = [encode_value(np.array([x], np.float32), space) for x in (1.0, -1.0, 2.0, 0.0, -2.0, 1.5)]
        first = _steps(client, actions)
        assert any(truncated for *_, truncated in first)  # the 8-step limit was crossed, then a reset
        restored = client.ok(restore=env_pb.RestoreRequest(handle=handle)).restore
        assert decode_value(restored.observation).shape == (3,)
        assert _steps(client, actions) == first
        client.ok(restore=env_pb.RestoreRequest(handle=handle))
        assert _steps(client, actions) == first


def test_snapshot_restore_cartpole(cartpole: str) -> None:
    actions = [pb.Value(discrete=a) for a in [1, 1, 0, 0, 1, 0, 1, 1, 0, 1]]
    with helpers.EnvClient(cartpole) as client:
        reset = client.ok(reset=env_pb.ResetRequest(seed=5)).reset
        handle = client.ok(snapshot=env_pb.SnapshotRequest()).snapshot.handle
        first = _steps(client, actions)
        restored = client.ok(restore=env_pb.RestoreRequest(handle=handle)).restore
        assert restored.observation == reset.observation
        assert restored.HasField("seconds") and 0 < restored.seconds < 10  # the restore's own time
        assert _steps(client, actions) == first
        second = client.ok(snapshot=env_pb.SnapshotRequest()).snapshot.handle
        assert second != handle
        unknown = client.call(restore=env_pb.RestoreRequest(handle="snap-999"))
        assert unknown.error.code == env_pb.ERROR_CODE_NOT_FOUND and "snap-999" in unknown.error.message


def test_invalid_actions_answer_an_error_and_the_stream_stays_up(cartpole: str, pendulum: str) -> None:
    with helpers.EnvClient(cartpole) as client:
        client.ok(reset=env_pb.ResetRequest(seed=0))
        wrong_value = client.call(step=env_pb.StepRequest(action=pb.Value(discrete=7)))
        assert wrong_value.error.code == env_pb.ERROR_CODE_INVALID_ACTION
        assert wrong_value.error.message == "action 7 is not in Discrete(2)"
        wrong_kind = client.call(
            step=env_pb.StepRequest(action=pb.Value(tensor=tensor_from_array(np.zeros(2))))
        )
        assert wrong_kind.error.code == env_pb.ERROR_CODE_INVALID_ACTION
        assert client.call(step=env_pb.StepRequest()).error.code == env_pb.ERROR_CODE_INVALID_ACTION
        assert client.ok(step=env_pb.StepRequest(action=pb.Value(discrete=1))).step.reward == 1.0
    with helpers.EnvClient(pendulum) as client:
        client.ok(reset=env_pb.ResetRequest(seed=0))
        wrong_shape = client.call(
            step=env_pb.StepRequest(action=pb.Value(tensor=tensor_from_array(np.zeros((2, 2), np.float32))))
        )
        assert wrong_shape.error.code == env_pb.ERROR_CODE_INVALID_ACTION
        assert (
            "shape (2, 2)" in wrong_shape.error.message
            and "Box(-2.0, 2.0, (1,), float32)" in wrong_shape.error.message
        )
        too_big = client.call(
            step=env_pb.StepRequest(action=pb.Value(tensor=tensor_from_array(np.array([9.0], np.float32))))
        )
        assert too_big.error.code == env_pb.ERROR_CODE_INVALID_ACTION
        ok = client.ok(
            step=env_pb.StepRequest(action=pb.Value(tensor=tensor_from_array(np.array([1.0], np.float32))))
        )
        assert decode_value(ok.step.observation).shape == (3,)


def test_render_gives_a_jpeg_of_the_env_size(cartpole: str, pendulum: str) -> None:
    for address, (height, width) in ((cartpole, (400, 600)), (pendulum, (500, 500))):
        with helpers.EnvClient(address) as client:
            reset = client.ok(reset=env_pb.ResetRequest(seed=1, render=True)).reset
            for frame in (reset.frame, client.ok(render=env_pb.RenderRequest()).render.frame):
                assert frame.encoding == "jpeg" and (frame.height, frame.width) == (height, width)
                image = simplejpeg.decode_jpeg(frame.data)
                assert image.shape == (height, width, 3) and image.std() > 0


def test_step_before_reset_and_close() -> None:
    with (
        helpers.ServerProcess(["--gym-id", "CartPole-v1"]) as server,
        helpers.EnvClient(server.address) as client,
    ):
        early = client.call(step=env_pb.StepRequest(action=pb.Value(discrete=0)))
        assert early.error.code == env_pb.ERROR_CODE_FAILED_PRECONDITION and "reset" in early.error.message
        client.ok(reset=env_pb.ResetRequest(seed=0))
        stepped = client.ok(step=env_pb.StepRequest(action=pb.Value(discrete=0), render=True)).step
        assert stepped.frame.encoding == "jpeg"
        assert client.ok(close=env_pb.CloseRequest()).HasField("close")
        closed = client.call(step=env_pb.StepRequest(action=pb.Value(discrete=0)))
        assert closed.error.code == env_pb.ERROR_CODE_FAILED_PRECONDITION
        assert closed.error.message == "the environment is closed"
    assert server.process.returncode == 0
