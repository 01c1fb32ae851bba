"""Atari games hosted by the real environment server process, over gRPC."""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import platform_testing.env_server_client as helpers
import pytest
from family_required import require_family
import simplejpeg
from platform_contracts.spaces import decode_value, space_from_proto
from platform_contracts.values import dict_from_datamap
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb

require_family("ale_py", "atari")

FACTORY = "platform_envs.adapters.atari:make_env"




@pytest.fixture(scope="module")
def pong() -> Iterator[str]:
    kwargs = json.dumps({"game": "pong", "max_episode_steps": 60})
    with helpers.ServerProcess(["--factory", FACTORY, "--kwargs", kwargs]) as server:
        yield server.address


def _action(index: int) -> pb.Value:
    return pb.Value(discrete=index)


def _steps(client, actions: list[int]) -> list[tuple[bytes, float, bool, bool, bytes]]:
    """Steps with frames (observation bytes, reward, terminated, truncated, JPEG bytes),
    resetting without a seed (from the env's RNG) after an episode ends."""
    result = []
    for action in actions:
        step = client.ok(step=env_pb.StepRequest(action=_action(action), render=True)).step
        obs = decode_value(step.observation)
        result.append((obs.tobytes(), step.reward, step.terminated, step.truncated, step.frame.data))
        if step.terminated or step.truncated:
            reset = client.ok(reset=env_pb.ResetRequest(render=True)).reset
            result.append((decode_value(reset.observation).tobytes(), 0.0, False, False, reset.frame.data))
    return result


def _actions(count: int, seed: int) -> list[int]:
    return [int(a) for a in np.random.default_rng(seed).integers(6, size=count)]


def test_spec_and_frames(pong: str) -> None:
    with helpers.EnvClient(pong) as client:
        spec = client.ok(spec=env_pb.SpecRequest()).spec
        observation_space = space_from_proto(spec.observation_space)
        assert observation_space.shape == (210, 160, 3) and observation_space.dtype == np.uint8
        assert space_from_proto(spec.action_space).n == 6
        metadata = dict_from_datamap(spec.metadata)
        assert metadata["control_rate"] == metadata["render_fps"] == 15.0
        assert metadata["action_names"] == ["NOOP", "FIRE", "RIGHT", "LEFT", "RIGHTFIRE", "LEFTFIRE"]
        reset = client.ok(reset=env_pb.ResetRequest(seed=0, render=True)).reset
        assert decode_value(reset.observation).shape == (210, 160, 3)
        frame = client.ok(render=env_pb.RenderRequest()).render.frame
        assert (frame.encoding, frame.height, frame.width) == ("jpeg", 210, 160)
        assert simplejpeg.decode_jpeg(frame.data).shape == (210, 160, 3)
        bad = client.call(step=env_pb.StepRequest(action=_action(6)))
        assert bad.HasField("error") and "Discrete(6)" in bad.error.message


def test_same_seed_same_trajectory(pong: str) -> None:
    actions = _actions(40, seed=1)
    with helpers.EnvClient(pong) as client:
        client.ok(reset=env_pb.ResetRequest(seed=9))
        first = _steps(client, actions)
        client.ok(reset=env_pb.ResetRequest(seed=9))
        assert _steps(client, actions) == first


def test_snapshot_restore_replays_100_steps_bit_for_bit(pong: str) -> None:
    """Sticky actions on (p = 0.25); the 60-step limit is crossed and the env resets from its RNG."""
    actions = _actions(100, seed=2)
    with helpers.EnvClient(pong) as client:
        client.ok(reset=env_pb.ResetRequest(seed=3))
        _steps(client, _actions(15, seed=4))
        before = client.ok(render=env_pb.RenderRequest()).render.frame.data
        handle = client.ok(snapshot=env_pb.SnapshotRequest()).snapshot.handle
        first = _steps(client, actions)
        assert sum(truncated for *_, truncated, _ in first) >= 1
        for _ in range(2):  # a snapshot restores any number of times
            client.ok(restore=env_pb.RestoreRequest(handle=handle))
            assert client.ok(render=env_pb.RenderRequest()).render.frame.data == before
            assert _steps(client, actions) == first


def test_frameskip_kwarg_and_bad_game_through_the_server() -> None:
    kwargs = json.dumps({"game": "breakout", "frameskip": 2})
    with (
        helpers.ServerProcess(["--factory", FACTORY, "--kwargs", kwargs]) as server,
        helpers.EnvClient(server.address) as client,
    ):
        metadata = dict_from_datamap(client.ok(spec=env_pb.SpecRequest()).spec.metadata)
        assert metadata["control_rate"] == 30.0 and metadata["frameskip"] == 2
        assert metadata["action_names"] == ["NOOP", "FIRE", "RIGHT", "LEFT"]
        reset = client.ok(reset=env_pb.ResetRequest(seed=0)).reset
        start = dict_from_datamap(reset.info)["episode_frame_number"]
        step = client.ok(step=env_pb.StepRequest(action=_action(1))).step
        assert dict_from_datamap(step.info)["episode_frame_number"] == start + 2
    failed = helpers.run_server(["--factory", FACTORY, "--kwargs", '{"game": "pongg"}'])
    assert failed.returncode != 0 and failed.stdout == ""
    assert "unknown Atari game 'pongg': did you mean pong" in failed.stderr
    assert "valid games include pong, breakout" in failed.stderr
