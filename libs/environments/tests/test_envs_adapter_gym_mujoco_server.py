"""All 11 Gymnasium MuJoCo tasks through the real environment server (`python -m platform_sdk`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import platform_testing.env_server_client as helpers
import pytest
from family_required import require_family
import simplejpeg
from platform_contracts.spaces import decode_value, encode_value, space_from_proto
from platform_contracts.values import dict_from_datamap
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb

require_family("mujoco", "mujoco")

FACTORY = "platform_envs.adapters.gym_mujoco:make_env"
# catalog id -> (task, decisions per second = 1 / (timestep * frame_skip))
TASKS: dict[str, tuple[str, float]] = {
    "ant": ("Ant", 20.0),
    "halfcheetah": ("HalfCheetah", 20.0),
    "hopper": ("Hopper", 125.0),
    "humanoid": ("Humanoid", 1 / 0.015),
    "humanoidstandup": ("HumanoidStandup", 1 / 0.015),
    "inverted-double-pendulum": ("InvertedDoublePendulum", 20.0),
    "inverted-pendulum": ("InvertedPendulum", 25.0),
    "pusher": ("Pusher", 20.0),
    "reacher": ("Reacher", 50.0),
    "swimmer": ("Swimmer", 25.0),
    "walker2d": ("Walker2d", 125.0),
}
REPLAY_STEPS = 20




@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, str]]:
    """One server per task, started together (each takes a couple of seconds to import MuJoCo)."""

    def start(task: str) -> Any:
        return helpers.ServerProcess(
            ["--factory", FACTORY, "--kwargs", json.dumps({"task": task})], ready_timeout=90
        )

    with ThreadPoolExecutor(len(TASKS)) as pool:
        futures = {key: pool.submit(start, task) for key, (task, _) in TASKS.items()}
    started = {key: future.result() for key, future in futures.items() if future.exception() is None}
    try:
        failed = {
            key: future.exception() for key, future in futures.items() if future.exception() is not None
        }
        assert not failed, failed
        yield {key: server.address for key, server in started.items()}
    finally:
        for server in started.values():
            server.stop()


def _image(frame: env_pb.Frame) -> np.ndarray:
    assert frame.encoding == "jpeg" and (frame.height, frame.width) == (240, 320)
    image = simplejpeg.decode_jpeg(frame.data)
    assert image.shape == (240, 320, 3)
    assert image.std() > 5  # not blank
    return image


def _steps(client: Any, actions: list[pb.Value]) -> list[tuple[Any, ...]]:
    """Steps with frames, resetting without a seed (from the env's RNG) after an episode ends."""
    result: list[tuple[Any, ...]] = []
    for action in actions:
        step = client.ok(step=env_pb.StepRequest(action=action, render=True)).step
        observation = decode_value(step.observation)
        result.append((observation.tobytes(), step.reward, step.terminated, step.truncated, step.frame.data))
        if step.terminated or step.truncated:
            reset = client.ok(reset=env_pb.ResetRequest()).reset
            result.append((decode_value(reset.observation).tobytes(),))
    return result


@pytest.mark.parametrize("key", list(TASKS))
def test_task_steps_restores_exactly_and_renders(servers: dict[str, str], key: str) -> None:
    task, control_rate = TASKS[key]
    with helpers.EnvClient(servers[key]) as client:
        spec = client.ok(spec=env_pb.SpecRequest()).spec
        assert spec.env_id == f"{task}-v5" and spec.render_mode == "rgb_array"
        observation_space = space_from_proto(spec.observation_space)
        action_space = space_from_proto(spec.action_space)
        metadata = dict_from_datamap(spec.metadata)
        assert metadata["control_rate"] == pytest.approx(control_rate)
        assert metadata["render_fps"] == round(control_rate)
        assert len(metadata["action_names"]) == action_space.shape[0]

        reset = client.ok(reset=env_pb.ResetRequest(seed=7, render=True)).reset
        observation = decode_value(reset.observation)
        assert observation_space.contains(observation)
        first_frame = _image(reset.frame)
        again = client.ok(reset=env_pb.ResetRequest(seed=7)).reset  # same seed, same start
        assert decode_value(again.observation).tobytes() == observation.tobytes()

        rng = np.random.default_rng(3)
        actions = [
            encode_value(rng.uniform(action_space.low, action_space.high).astype(np.float32), action_space)
            for _ in range(REPLAY_STEPS + 3)
        ]
        warm_up = _steps(client, actions[:3])
        assert all(
            observation_space.contains(np.frombuffer(s[0], observation.dtype)) for s in warm_up if len(s) > 1
        )
        handle = client.ok(snapshot=env_pb.SnapshotRequest()).snapshot.handle
        first = _steps(client, actions[3:])
        client.ok(restore=env_pb.RestoreRequest(handle=handle))
        assert _steps(client, actions[3:]) == first  # observations, rewards, flags and frames

        last = _image(client.ok(render=env_pb.RenderRequest()).render.frame)
        assert not np.array_equal(last, first_frame)  # it moved
