"""PickPlaceEnv (platform_envs.robots.pick_place) on the real Menagerie arms: the scene, 5
decisions a second, labelled observations, success only for a block at rest in the bin under
the green ball and released, the teacher's suggestion on every answer, seeding, and pickling
mid-episode."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces
from platform_envs.robots.errors import RobotError
from platform_envs.robots.pick_place import PickPlaceEnv
from platform_envs.robots.pick_place_scene import BIN_FLOOR_HALF, BIN_HEIGHT, BLOCK_HALF_SIZE
from platform_sdk.labels import check_labels

ARMS = ("franka_emika_panda", "ufactory_xarm7")
STAY_OPEN = [2, 2, 2, 0]  # hand_steps: every axis at its middle level, gripper open
STAY_CLOSED = [2, 2, 2, 1]
TASK_PARTS = ["block_position", "block_from_hand", "ball_position", "bin_positions"]


def _labelled(env: PickPlaceEnv, observation: np.ndarray) -> dict[str, np.ndarray]:
    return {name: observation[start:stop] for name, start, stop in env.get_observation_labels()}


def _put_block(env: PickPlaceEnv, bin_index: int, lift: float = 0.0) -> None:
    """Put the block at rest on the floor of bin `bin_index` (raised by `lift` m)."""
    import mujoco

    model, data, scene = env.model, env.data, env.scene
    center = scene.bin_centers(model)[bin_index]
    address = scene.block_qpos
    height = 2 * BIN_FLOOR_HALF + BLOCK_HALF_SIZE + 0.001 + lift
    data.qpos[address : address + 3] = center + np.array([0.0, 0.0, height])
    data.qpos[address + 3 : address + 7] = [1.0, 0.0, 0.0, 0.0]
    data.qvel[scene.block_dof : scene.block_dof + 6] = 0.0
    mujoco.mj_forward(model, data)


@pytest.mark.parametrize("robot", ARMS)
def test_five_decisions_a_second_by_hand_steps_with_a_60_second_limit(robot: str) -> None:
    env = PickPlaceEnv(robot)
    assert env.model.opt.timestep == 0.002
    assert env.metadata["control_rate"] == 5.0
    assert env.metadata["task"] == "pick_place" and env.metadata["robot"] == robot
    assert env.metadata["control"] == "hand_steps"
    assert env.action_space == spaces.MultiDiscrete([5, 5, 5, 2])
    _, info = env.reset(seed=0)
    steps = 0
    truncated = False
    while not truncated:
        _, _, terminated, truncated, info = env.step(STAY_OPEN)
        steps += 1
        assert not terminated and not info["is_success"]
    assert steps == 300  # 60 s at 5 decisions a second


@pytest.mark.parametrize("robot", ARMS)
def test_the_scene_has_a_free_block_two_bins_and_a_ball_that_touches_nothing(robot: str) -> None:
    env = PickPlaceEnv(robot)
    model = env.model
    import mujoco

    block = model.body("block")
    assert model.jnt_type[block.jntadr[0]] == mujoco.mjtJoint.mjJNT_FREE
    ball = model.geom("ball")
    assert ball.contype[0] == 0 and ball.conaffinity[0] == 0
    assert model.body("ball").mocapid[0] >= 0
    for name in ("bin_0", "bin_1"):
        walls = [model.geom(i) for i in range(model.ngeom) if model.geom_bodyid[i] == model.body(name).id]
        assert len(walls) == 5  # a floor and four walls: open at the top


@pytest.mark.parametrize("robot", ARMS)
def test_labels_name_the_arm_and_the_task_parts_in_order(robot: str) -> None:
    env = PickPlaceEnv(robot)
    observation, _ = env.reset(seed=2)
    labels = check_labels(env.get_observation_labels(), observation.size)
    names = [name for name, _, _ in labels]
    assert names[-4:] == TASK_PARTS
    assert {"joint_angles", "hand_position", "gripper", "hand_target"} <= set(names)
    assert (labels[-1][2],) == observation.shape == env.observation_space.shape
    parts = _labelled(env, observation)
    assert np.allclose(parts["block_position"], env.block_position)
    assert np.allclose(parts["block_from_hand"], env.block_position - env.hand_position)
    assert np.allclose(parts["bin_positions"].reshape(2, 3), env.scene.bin_centers(env.model))
    target = parts["bin_positions"].reshape(2, 3)[env.target_bin]
    assert np.allclose(parts["ball_position"][:2], target[:2])  # the ball floats over the target bin
    assert parts["ball_position"][2] > target[2] + BIN_HEIGHT


@pytest.mark.parametrize("robot", ARMS)
def test_seeds_draw_both_bins_and_block_starts_within_the_start_area(robot: str) -> None:
    env = PickPlaceEnv(robot)
    bins, starts = set(), []
    for seed in range(12):
        env.reset(seed=seed)
        bins.add(env.target_bin)
        starts.append(env.block_position)
    assert bins == {0, 1}
    low, high = np.array(env.places.start_low), np.array(env.places.start_high)
    assert all(np.all(start[:2] >= low) and np.all(start[:2] <= high) for start in starts)
    assert len({tuple(np.round(start, 6)) for start in starts}) == 12


@pytest.mark.parametrize("robot", ARMS)
def test_success_needs_the_block_at_rest_in_the_target_bin_released(robot: str) -> None:
    env = PickPlaceEnv(robot)
    env.reset(seed=0)
    assert not env.success
    _put_block(env, env.target_bin, lift=0.03)  # dropped into the bin: still falling at first
    _, reward, terminated, _, info = env.step(STAY_OPEN)
    settled = info["is_success"]
    for _ in range(3):
        if settled:
            break
        _, reward, terminated, _, info = env.step(STAY_OPEN)
        settled = info["is_success"]
    assert settled and terminated
    terms = info["reward_terms"]
    assert terms["place"] == 5.0 and reward == pytest.approx(sum(terms.values()))


@pytest.mark.parametrize("robot", ARMS)
def test_the_wrong_bin_is_not_success(robot: str) -> None:
    env = PickPlaceEnv(robot)
    env.reset(seed=0)
    _put_block(env, 1 - env.target_bin)
    for _ in range(3):
        _, _, terminated, _, info = env.step(STAY_OPEN)
        assert not info["is_success"] and not terminated
    assert env.block_at_rest and env.released and not env.block_in_target_bin


@pytest.mark.parametrize("robot", ARMS)
def test_a_block_in_the_bin_with_the_gripper_closed_is_not_released(robot: str) -> None:
    env = PickPlaceEnv(robot)
    env.reset(seed=0)
    _put_block(env, env.target_bin)
    for _ in range(3):
        _, _, terminated, _, info = env.step(STAY_CLOSED)
        assert not info["is_success"] and not terminated
    assert env.block_in_target_bin and env.block_at_rest and not env.released


@pytest.mark.parametrize("robot", ARMS)
def test_teacher_action_comes_with_every_reset_and_step_in_the_action_space(robot: str) -> None:
    env = PickPlaceEnv(robot)
    _, info = env.reset(seed=5)
    for _ in range(10):
        action = info["teacher_action"]
        assert isinstance(action, list) and len(action) == 4 and all(isinstance(v, int) for v in action)
        assert env.action_space.contains(np.array(action))
        _, _, _, _, info = env.step(action)
    hand = PickPlaceEnv(robot, control="hand")
    _, info = hand.reset(seed=5)
    assert all(isinstance(v, float) for v in info["teacher_action"])
    assert hand.action_space.contains(np.array(info["teacher_action"]))


def test_joint_control_works_without_a_teacher() -> None:
    env = PickPlaceEnv("franka_emika_panda", control="joints")
    _, info = env.reset(seed=0)
    assert "teacher_action" not in info
    assert env.metadata["action_names"][-1] == "actuator8"
    _, _, _, _, info = env.step(env.model.actuator_ctrlrange.mean(axis=1))
    assert info["is_success"] is False


def test_a_workspace_too_small_to_reach_the_block_is_refused() -> None:
    with pytest.raises(RobotError, match=r"pick_place needs workspace >= 0\.\d+ m"):
        PickPlaceEnv("franka_emika_panda", workspace=0.2)


def _run(env: PickPlaceEnv, actions: list[Any]) -> list[np.ndarray]:
    return [env.step(action)[0] for action in actions]


@pytest.mark.parametrize("robot", ARMS)
def test_the_same_seed_gives_the_same_episode(robot: str) -> None:
    first, second = PickPlaceEnv(robot), PickPlaceEnv(robot)
    obs_a, info_a = first.reset(seed=7)
    obs_b, info_b = second.reset(seed=7)
    assert np.array_equal(obs_a, obs_b) and info_a["teacher_action"] == info_b["teacher_action"]
    actions = [[4, 0, 1, 0]] * 5 + [[2, 3, 0, 1]] * 5
    assert all(np.array_equal(a, b) for a, b in zip(_run(first, actions), _run(second, actions), strict=True))


@pytest.mark.parametrize("robot", ARMS)
def test_a_pickled_env_mid_episode_continues_bit_exact(robot: str) -> None:
    env = PickPlaceEnv(robot)
    _, info = env.reset(seed=4)
    for _ in range(18):
        _, _, _, _, info = env.step(info["teacher_action"])
    assert env.grasped  # mid-task: the teacher has the block in hand
    copy = pickle.loads(pickle.dumps(env))
    original_info, copy_info = info, dict(info)
    for _ in range(15):
        a = env.step(original_info["teacher_action"])
        b = copy.step(copy_info["teacher_action"])
        assert np.array_equal(a[0], b[0]) and a[1:4] == b[1:4]
        assert a[4]["teacher_action"] == b[4]["teacher_action"]
        original_info, copy_info = a[4], b[4]
    assert copy.target_bin == env.target_bin


def test_reward_terms_grow_with_each_stage() -> None:
    env = PickPlaceEnv("franka_emika_panda")
    _, info = env.reset(seed=4)
    _, _, _, _, info = env.step(STAY_OPEN)
    start = info["reward_terms"]
    assert 0.0 < start["reach"] < 1.0 and start["grasp"] == start["carry"] == start["place"] == 0.0
    for _ in range(18):
        _, _, _, _, info = env.step(info["teacher_action"])
    held = info["reward_terms"]
    assert env.grasped and held["grasp"] == 1.0 and held["carry"] > 0.0 and held["reach"] > start["reach"]


def test_a_moved_block_start_and_a_moved_bin_are_followed() -> None:
    """World changes edit the model: a "position" change moves the free block's qpos0 (its start
    moves with it at every reset) and a bin's body_pos (the ball, the labels and success follow)."""
    moved, plain = PickPlaceEnv("franka_emika_panda"), PickPlaceEnv("franka_emika_panda")
    address = moved.scene.block_qpos
    moved.model.qpos0[address : address + 3] += [0.03, -0.02, 0.0]
    plain.reset(seed=3)
    moved.reset(seed=3)
    assert np.allclose(moved.block_position - plain.block_position, [0.03, -0.02, 0.0])
    target = moved.target_bin
    moved.model.body_pos[moved.scene.bin_bodies[target]] += [0.04, 0.0, 0.0]
    observation, _ = moved.reset(seed=3)
    parts = _labelled(moved, observation)
    assert np.allclose(parts["ball_position"][:2], moved.scene.bin_centers(moved.model)[target][:2])
    assert np.allclose(parts["bin_positions"].reshape(2, 3)[target], moved.target_bin_center)
    _put_block(moved, target)
    assert moved.block_in_target_bin
