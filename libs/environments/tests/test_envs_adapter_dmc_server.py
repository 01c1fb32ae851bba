"""DeepMind Control through the real environment server (`python -m platform_sdk`): one task per domain."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import gymnasium
import numpy as np
import platform_testing.env_server_client as helpers
import pytest
from family_required import require_family
import simplejpeg
from platform_contracts.spaces import decode_value, encode_value, space_from_proto
from platform_contracts.values import dict_from_datamap
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb

require_family("dm_control", "dmc")

FACTORY = "platform_envs.adapters.dmc:make_env"
# One task per domain (19), preferring tasks whose episodes change the model (targets, terrain,
# gains): domain -> (task, decisions per second = 1 / (physics timestep * substeps))
TASKS: dict[str, tuple[str, float]] = {
    "acrobot": ("swingup", 100.0),
    "ball_in_cup": ("catch", 50.0),
    "cartpole": ("swingup", 100.0),
    "cheetah": ("run", 100.0),
    "dog": ("fetch", 1 / 0.015),
    "finger": ("turn_hard", 50.0),
    "fish": ("swim", 25.0),
    "hopper": ("hop", 50.0),
    "humanoid": ("run", 40.0),
    "humanoid_CMU": ("stand", 50.0),
    "lqr": ("lqr_2_1", 1 / 0.03),
    "manipulator": ("bring_ball", 100.0),
    "pendulum": ("swingup", 50.0),
    "point_mass": ("hard", 50.0),
    "quadruped": ("escape", 50.0),
    "reacher": ("hard", 50.0),
    "stacker": ("stack_2", 100.0),
    "swimmer": ("swimmer6", 1 / 0.03),
    "walker": ("walk", 40.0),
}
REPLAY_STEPS = 20




def _start(domain: str, task: str, **kwargs: Any) -> Any:
    arguments = json.dumps({"domain": domain, "task": task, **kwargs})
    return helpers.ServerProcess(["--factory", FACTORY, "--kwargs", arguments], ready_timeout=120)


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, Any]]:
    """One server per domain plus a second reacher, started together (each imports dm_control)."""
    jobs = {domain: (domain, task) for domain, (task, _) in TASKS.items()}
    jobs["reacher-2"] = ("reacher", "hard")
    with ThreadPoolExecutor(len(jobs)) as pool:
        futures = {key: pool.submit(_start, *job) for key, job in jobs.items()}
    started = {key: future.result() for key, future in futures.items() if future.exception() is None}
    try:
        failed = {
            key: future.exception() for key, future in futures.items() if future.exception() is not None
        }
        assert not failed, failed
        yield started
    finally:
        for server in started.values():  # all at once: each takes a moment to exit
            server.process.terminate()
        for server in started.values():
            server.stop()


def _image(frame: env_pb.Frame) -> np.ndarray:
    assert frame.encoding == "jpeg" and (frame.height, frame.width) == (240, 320)
    image = simplejpeg.decode_jpeg(frame.data)
    assert image.shape == (240, 320, 3)
    assert image.std() > 5  # not blank
    return image


def _observation_bytes(value: pb.Value) -> tuple[tuple[str, bytes], ...]:
    observation = decode_value(value)
    return tuple((name, np.asarray(array).tobytes()) for name, array in observation.items())


def _steps(client: Any, actions: list[pb.Value], render: bool = True) -> list[tuple[Any, ...]]:
    result: list[tuple[Any, ...]] = []
    for action in actions:
        step = client.ok(step=env_pb.StepRequest(action=action, render=render)).step
        info = dict_from_datamap(step.info)
        result.append(
            (
                _observation_bytes(step.observation),
                step.reward,
                step.terminated,
                step.truncated,
                info,
                step.frame.data,
            )
        )
    return result


def _actions(action_space: gymnasium.spaces.Box, count: int) -> list[pb.Value]:
    rng = np.random.default_rng(3)
    return [
        encode_value(rng.uniform(action_space.low, action_space.high), action_space) for _ in range(count)
    ]


@pytest.mark.parametrize("domain", list(TASKS))
def test_task_steps_restores_exactly_and_renders(servers: dict[str, Any], domain: str) -> None:
    task, control_rate = TASKS[domain]
    with helpers.EnvClient(servers[domain].address) as client:
        spec = client.ok(spec=env_pb.SpecRequest()).spec
        assert spec.env_id == f"dmc-{domain}-{task}".replace("_", "-") and spec.render_mode == "rgb_array"
        observation_space = space_from_proto(spec.observation_space)
        action_space = space_from_proto(spec.action_space)
        assert isinstance(observation_space, gymnasium.spaces.Dict)
        assert all(box.dtype == np.float64 for box in observation_space.spaces.values())
        assert action_space.dtype == np.float64 and action_space.is_bounded()
        metadata = dict_from_datamap(spec.metadata)
        assert metadata["control_rate"] == pytest.approx(control_rate)
        assert metadata["render_fps"] == round(control_rate)
        assert len(metadata["action_names"]) == action_space.shape[0]
        assert (metadata["domain"], metadata["task"]) == (domain, task)

        reset = client.ok(reset=env_pb.ResetRequest(seed=7, render=True)).reset
        assert observation_space.contains(decode_value(reset.observation))
        first_frame = _image(reset.frame)
        again = client.ok(reset=env_pb.ResetRequest(seed=7)).reset  # same seed, same start
        assert _observation_bytes(again.observation) == _observation_bytes(reset.observation)

        actions = _actions(action_space, REPLAY_STEPS + 3)
        warm_up = _steps(client, actions[:3], render=False)
        assert all(info == {"discount": 1.0} for *_, info, _ in warm_up)
        handle = client.ok(snapshot=env_pb.SnapshotRequest()).snapshot.handle
        first = _steps(client, actions[3:])
        client.ok(restore=env_pb.RestoreRequest(handle=handle))
        assert _steps(client, actions[3:]) == first  # observations, rewards, flags, info and frames

        last = _image(client.ok(render=env_pb.RenderRequest()).render.frame)
        assert not np.array_equal(last, first_frame)  # it moved


def test_the_same_seed_gives_the_same_trajectory_in_another_instance(servers: dict[str, Any]) -> None:
    trajectories = []
    for key in ("reacher", "reacher-2"):
        with helpers.EnvClient(servers[key].address) as client:
            spec = client.ok(spec=env_pb.SpecRequest()).spec
            reset = client.ok(reset=env_pb.ResetRequest(seed=21)).reset
            steps = _steps(client, _actions(space_from_proto(spec.action_space), 10), render=False)
            trajectories.append((_observation_bytes(reset.observation), steps))
    assert trajectories[0] == trajectories[1]


def test_substeps_reach_the_spec_through_the_server() -> None:
    with _start("cartpole", "swingup", substeps=4) as server, helpers.EnvClient(server.address) as client:
        metadata = dict_from_datamap(client.ok(spec=env_pb.SpecRequest()).spec.metadata)
    assert metadata["substeps"] == 4 and metadata["control_rate"] == pytest.approx(25.0)
