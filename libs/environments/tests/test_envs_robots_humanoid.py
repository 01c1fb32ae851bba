"""HumanoidEnv (platform_envs.robots.humanoid) on the real Menagerie humanoids (Unitree H1 and G1,
Booster T1), standing and walking: spaces and labels, the control rate, the reward's terms,
determinism, snapshots by pickle, falls, walk's command and rendering."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces
from platform_envs.robots import make_env
from platform_envs.robots.humanoid import COMMAND_HIGH, COMMAND_LOW, FALL_FRACTION, MAX_TILT_COS, HumanoidEnv
from platform_envs.robots.humanoid_rewards import WEIGHTS

HUMANOIDS = ("unitree_h1", "unitree_g1", "booster_t1")
ACTUATORS = {"unitree_h1": 19, "unitree_g1": 29, "booster_t1": 23}
BOTH = [(robot, task) for robot in HUMANOIDS for task in ("stand", "walk")]
PARTS = [
    "torso_height",
    "gravity_in_torso",
    "torso_linear_velocity",
    "torso_angular_velocity",
    "joint_angles",
    "joint_velocities",
    "last_action",
]


pytestmark = pytest.mark.usefixtures("menagerie_root")  # sdk/tests/conftest.py


def _env(robot: str, task: str, **kwargs: Any) -> HumanoidEnv:
    """Through make_env, the catalog's factory (it picks the headless GL back-end before MuJoCo
    is imported)."""
    env = make_env(robot, task, **kwargs)
    assert isinstance(env, HumanoidEnv)
    return env


def _episode(env: HumanoidEnv, seed: int, steps: int) -> list[tuple[Any, ...]]:
    observation, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    trace: list[tuple[Any, ...]] = [(observation, info)]
    for _ in range(steps):
        action = rng.uniform(-0.3, 0.3, env.action_space.shape)
        trace.append(env.step(action))
    return trace


def _same(left: list[tuple[Any, ...]], right: list[tuple[Any, ...]]) -> None:
    assert len(left) == len(right)
    for a, b in zip(left, right, strict=True):
        assert np.array_equal(a[0], b[0])  # observations bit for bit
        assert a[1:] == b[1:]  # reward, terminated, truncated and info (reward terms, command)


@pytest.mark.parametrize(("robot", "task"), BOTH)
def test_spaces_and_labels_cover_the_observation(robot: str, task: str) -> None:
    env = _env(robot, task)
    nu = ACTUATORS[robot]
    assert env.model.nu == nu
    assert env.action_space == spaces.Box(-1.0, 1.0, (nu,), np.float64)
    assert env.metadata["action_names"] == [env.model.actuator(i).name for i in range(nu)]
    labels = env.get_observation_labels()
    assert [name for name, _, _ in labels] == PARTS + (["command"] if task == "walk" else [])
    assert labels[0][1] == 0 and (labels[-1][2],) == env.observation_space.shape
    assert all(stop == next_start for (_, _, stop), (_, next_start, _) in zip(labels, labels[1:]))
    sizes = {name: stop - start for name, start, stop in labels}
    assert sizes["torso_height"] == 1 and sizes["gravity_in_torso"] == 3
    assert sizes["joint_angles"] == sizes["joint_velocities"] == sizes["last_action"] == nu
    observation, _ = env.reset(seed=0)
    assert observation.shape == env.observation_space.shape and observation.dtype == np.float64
    parts = {name: observation[start:stop] for name, start, stop in labels}
    assert np.allclose(parts["gravity_in_torso"], [0.0, 0.0, -1.0], atol=1e-6)  # upright at reset
    assert parts["torso_height"][0] == pytest.approx(env.data.xpos[env._torso, 2])
    assert np.all(parts["last_action"] == 0.0)
    observation, *_ = env.step(np.full(nu, 0.25))
    _, start, stop = labels[PARTS.index("last_action")]
    assert np.all(observation[start:stop] == 0.25)


@pytest.mark.parametrize("robot", HUMANOIDS)
def test_fifty_decisions_a_second_by_default_and_substeps_change_it(robot: str) -> None:
    env = _env(robot, "stand")
    assert env.model.opt.timestep == 0.002
    assert env.substeps == env.metadata["substeps"] == 10
    assert env.metadata["control_rate"] == env.control_rate == pytest.approx(50.0)
    env.reset(seed=0)
    before = env.data.time
    env.step(np.zeros(env.action_space.shape))
    assert env.data.time - before == pytest.approx(0.02)  # one decision covers 10 physics steps
    slower = make_env(robot, "walk", substeps=40)
    assert slower.metadata["control_rate"] == pytest.approx(12.5) and slower.metadata["substeps"] == 40
    slower.reset(seed=0)
    slower.step(np.zeros(slower.action_space.shape))
    assert slower.data.time == pytest.approx(0.08)


@pytest.mark.parametrize(("robot", "task"), BOTH)
def test_reward_terms_are_the_tasks_and_sum_to_the_reward(robot: str, task: str) -> None:
    env = _env(robot, task)
    env.reset(seed=1)
    _, reward, _, _, info = env.step(np.zeros(env.action_space.shape))
    terms = info["reward_terms"]
    assert list(terms) == list(WEIGHTS[task])
    assert ("height" in terms) == (task == "stand") and ("lin_vel_z" in terms) == (task == "walk")
    assert reward == pytest.approx(sum(terms.values()))
    assert terms["alive"] == WEIGHTS[task]["alive"] and terms["termination"] == 0.0  # standing


@pytest.mark.parametrize(("robot", "task"), [("unitree_h1", "walk"), ("unitree_g1", "stand"), ("booster_t1", "walk")])
def test_the_same_seed_gives_the_same_episode(robot: str, task: str) -> None:
    first = _episode(_env(robot, task), seed=7, steps=25)
    second = _episode(_env(robot, task), seed=7, steps=25)
    _same(first, second)
    other = _episode(_env(robot, task), seed=8, steps=1)
    assert not np.array_equal(other[0][0], first[0][0])  # the reset's joint noise (and command) differ


@pytest.mark.parametrize(("robot", "task"), [("unitree_h1", "stand"), ("unitree_g1", "walk"), ("booster_t1", "stand")])
def test_a_pickled_env_continues_bit_for_bit(robot: str, task: str) -> None:
    env = _env(robot, task)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(15):
        env.step(rng.uniform(-0.3, 0.3, env.action_space.shape))
    env.render()  # a render context is not part of the state
    copy = pickle.loads(pickle.dumps(env))
    actions = [rng.uniform(-0.3, 0.3, env.action_space.shape) for _ in range(15)]
    original = [env.step(action) for action in actions]
    restored = [copy.step(action) for action in actions]
    _same(original, restored)
    assert copy.elapsed_steps == env.elapsed_steps == 30
    assert copy.render().shape == (240, 320, 3)


@pytest.mark.parametrize("robot", HUMANOIDS)
def test_standing_still_goes_on_and_a_fall_terminates(robot: str) -> None:
    env = _env(robot, "stand")
    env.reset(seed=0)
    for _ in range(50):  # a second of holding the standing pose
        _, _, terminated, truncated, _ = env.step(np.zeros(env.action_space.shape))
        assert not terminated and not truncated
    env.reset(seed=0)
    env.data.qvel[3] = 6.0  # a shove: the floating base rolls at 6 rad/s
    for _ in range(250):
        observation, _, terminated, truncated, info = env.step(np.zeros(env.action_space.shape))
        if terminated:
            break
    assert terminated and not truncated, f"{robot} did not fall within 5 s of a shove"
    height, up = observation[0], -observation[3]  # torso_height, -gravity_in_torso z
    assert height < FALL_FRACTION * env._standing_height or up < MAX_TILT_COS
    assert info["reward_terms"]["termination"] == WEIGHTS["stand"]["termination"]
    assert info["reward_terms"]["alive"] == 0.0


def test_an_episode_is_truncated_at_its_time_limit() -> None:
    env = _env("unitree_h1", "stand", time_limit=0.1)
    env.reset(seed=0)
    flags = [env.step(np.zeros(env.action_space.shape))[2:4] for _ in range(5)]
    assert flags == [(False, False)] * 4 + [(False, True)]  # 0.1 s = 5 decisions at 50 a second


@pytest.mark.parametrize("robot", HUMANOIDS)
def test_walks_command_is_in_the_observation_and_info(robot: str) -> None:
    env = _env(robot, "walk")
    labels = {name: (start, stop) for name, start, stop in env.get_observation_labels()}
    start, stop = labels["command"]
    commands = []
    for seed in (0, 1, 2):
        observation, info = env.reset(seed=seed)
        command = observation[start:stop]
        assert np.array_equal(command, env.command) and info["command"] == command.tolist()
        assert np.all(command >= COMMAND_LOW) and np.all(command <= COMMAND_HIGH)
        observation, _, _, _, info = env.step(np.zeros(env.action_space.shape))
        assert np.array_equal(observation[start:stop], command) and info["command"] == command.tolist()
        commands.append(tuple(command))
    assert len(set(commands)) == 3  # drawn per episode from the seed
    env.reset(seed=0)
    assert tuple(env.command) == commands[0]
    stand = _env(robot, "stand")
    _, info = stand.reset(seed=0)
    assert "command" not in info and "command" not in [name for name, _, _ in stand.get_observation_labels()]


@pytest.mark.parametrize("robot", HUMANOIDS)
def test_render_gives_frames_of_the_scene(robot: str) -> None:
    env = make_env(robot, "walk")
    env.reset(seed=0)
    frame = env.render()
    assert frame is not None and frame.shape == (240, 320, 3) and frame.dtype == np.uint8
    assert frame.std() > 5.0  # a scene, not a blank image
    small = make_env(robot, "stand", render_size=[60, 80], render_quality="full")
    small.reset(seed=0)
    assert small.render().shape == (60, 80, 3)
    assert make_env(robot, "stand", render_mode=None).render() is None
    env.close()
    small.close()
