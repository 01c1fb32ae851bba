"""ArmReachEnv (platform_envs.robots.arm_reach) on the real Menagerie arms: seeded targets in the
workspace, the reward and success, the control rate, determinism and snapshots by pickle."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest
from platform_envs.robots.arm_reach import SUCCESS_DISTANCE, ArmReachEnv

ARMS = ("franka_emika_panda", "ufactory_xarm7")


def _episode(env: ArmReachEnv, seed: int, steps: int) -> list[tuple[Any, ...]]:
    observation, info = env.reset(seed=seed)
    env.action_space.seed(seed)
    trace: list[tuple[Any, ...]] = [(observation, info["is_success"])]
    for _ in range(steps):
        observation, reward, terminated, truncated, info = env.step(env.action_space.sample())
        trace.append((observation, reward, terminated, truncated, info["is_success"], info["reward_terms"]))
    return trace


def _same(a: list[tuple[Any, ...]], b: list[tuple[Any, ...]]) -> bool:
    for left, right in zip(a, b, strict=True):
        for x, y in zip(left, right, strict=True):
            if isinstance(x, np.ndarray):
                if not np.array_equal(x, y):
                    return False
            elif x != y:
                return False
    return True


def _toward_target(env: ArmReachEnv) -> np.ndarray:
    """A "hand" action moving the hand's target toward the reach target, gripper open."""
    assert env.hand_controller is not None
    move = (env.target_position - env.hand_controller.target) / env.settings.hand_step
    return np.append(np.clip(move, -1.0, 1.0), 0.0)


@pytest.mark.parametrize("robot", ARMS)
def test_targets_are_seeded_inside_the_workspace_and_above_the_table(robot: str) -> None:
    env = ArmReachEnv(robot, workspace=0.2)
    home = np.array(env.layout.home.hand_position)
    targets = []
    for seed in range(8):
        env.reset(seed=seed)
        targets.append(env.target_position.copy())
        env.reset(seed=seed)
        assert np.array_equal(env.target_position, targets[-1])
    spread = np.array(targets) - home
    assert np.all(np.abs(spread) <= 0.2 + 1e-12)
    assert np.all(np.array(targets)[:, 2] > env.layout.table_top + 0.05)
    assert len({tuple(t) for t in targets}) == 8
    target = env.unwrapped.data.mocap_pos[env.unwrapped.model.body("target").mocapid[0]]
    assert np.array_equal(target, targets[-1])  # the sphere is drawn at the target


@pytest.mark.parametrize("robot", ARMS)
def test_hand_control_reaches_the_target_which_counts_as_success(robot: str) -> None:
    env = ArmReachEnv(robot, control="hand")
    env.reset(seed=5)
    assert env.distance > SUCCESS_DISTANCE
    rewards, successes = [], []
    for _ in range(80):  # 4 s
        _, reward, terminated, truncated, info = env.step(_toward_target(env))
        rewards.append(reward)
        successes.append(info["is_success"])
        assert not terminated and not truncated  # the episode runs on at the target
        terms = info["reward_terms"]
        assert reward == pytest.approx(terms["distance"] + terms["action"])
        assert terms["distance"] == pytest.approx(-env.distance)
    assert successes[-1] and env.distance < 0.01
    assert rewards[-1] > -0.01 > rewards[0]


def test_the_episode_ends_at_the_time_limit_10_s_by_default() -> None:
    env = ArmReachEnv("ufactory_xarm7", control="hand_steps")
    env.reset(seed=0)
    truncated, steps = False, 0
    while not truncated:
        *_, truncated, _ = env.step([2, 2, 2, 0])
        steps += 1
    assert steps == 200  # 10 s at 20 decisions a second


@pytest.mark.parametrize(("substeps", "rate"), [(None, 20.0), (100, 5.0), (10, 50.0)])
def test_substeps_set_the_control_rate(substeps: int | None, rate: float) -> None:
    kwargs = {} if substeps is None else {"substeps": substeps}
    env = ArmReachEnv("franka_emika_panda", **kwargs)
    assert env.metadata["control_rate"] == rate
    assert env.metadata["substeps"] == (substeps or 25)
    env.reset(seed=0)
    env.step(env.action_space.sample())
    assert env.unwrapped.data.time == pytest.approx((substeps or 25) * 0.002)


@pytest.mark.parametrize("robot", ARMS)
@pytest.mark.parametrize("control", ["joints", "hand_steps"])
def test_the_same_seed_gives_the_same_episode(robot: str, control: str) -> None:
    first = _episode(ArmReachEnv(robot, control=control), seed=11, steps=30)
    second = _episode(ArmReachEnv(robot, control=control), seed=11, steps=30)
    assert _same(first, second)
    assert not _same(first, _episode(ArmReachEnv(robot, control=control), seed=12, steps=30))


@pytest.mark.parametrize("robot", ARMS)
@pytest.mark.parametrize("control", ["joints", "hand_steps", "hand"])
def test_an_unpickled_env_continues_the_episode_bit_for_bit(robot: str, control: str) -> None:
    env = ArmReachEnv(robot, control=control)
    env.reset(seed=3)
    env.action_space.seed(3)
    for _ in range(15):
        env.step(env.action_space.sample())
    copy = pickle.loads(pickle.dumps(env))
    actions = [env.action_space.sample() for _ in range(15)]
    for action in actions:
        left, right = env.step(action), copy.step(action)
        assert np.array_equal(left[0], right[0])
        assert left[1:4] == right[1:4]
        assert left[4]["is_success"] == right[4]["is_success"]
    assert np.array_equal(env.target_position, copy.target_position)
    if control != "joints":
        assert np.array_equal(env.hand_controller.target, copy.hand_controller.target)
