"""ArmEnv (platform_envs.robots.arm_env) on the real Menagerie arms: control modes and their
action spaces and names, labelled observations, errors for impossible settings, frames."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from gymnasium import spaces
from platform_envs.robots.arm_env import ArmEnv
from platform_envs.robots.arm_reach import ArmReachEnv
from platform_envs.robots.errors import RobotError
from platform_sdk.labels import check_labels

ARMS = ("franka_emika_panda", "ufactory_xarm7")
ARM_PARTS = ["joint_angles", "joint_velocities", "hand_position", "gripper"]


@functools.cache
def _env(robot: str, control: str) -> ArmReachEnv:
    env = ArmReachEnv(robot, control=control)
    env.reset(seed=0)
    return env


@pytest.mark.parametrize("robot", ARMS)
def test_joint_control_is_a_box_of_the_actuators_ctrl_ranges_named_by_actuator(robot: str) -> None:
    env = _env(robot, "joints")
    model = env.unwrapped.model
    assert isinstance(env.action_space, spaces.Box)
    assert np.array_equal(env.action_space.low, model.actuator_ctrlrange[:, 0])
    assert np.array_equal(env.action_space.high, model.actuator_ctrlrange[:, 1])
    assert env.metadata["action_names"] == [model.actuator(i).name for i in range(model.nu)]
    assert env.metadata["control"] == "joints"
    assert len(env.metadata["action_names"]) == 8  # seven joints and the gripper


@pytest.mark.parametrize("robot", ARMS)
@pytest.mark.parametrize(
    ("control", "space"),
    [
        ("hand_steps", spaces.MultiDiscrete([5, 5, 5, 2])),
        ("hand", spaces.Box(np.array([-1.0] * 3 + [0.0]), 1.0, dtype=np.float64)),
    ],
)
def test_hand_control_acts_in_hand_x_y_z_and_gripper(robot: str, control: str, space: spaces.Space) -> None:
    env = _env(robot, control)
    assert env.action_space == space
    assert env.metadata["action_names"] == ["hand_x", "hand_y", "hand_z", "gripper"]
    assert env.metadata["control"] == control
    assert env.metadata["robot"] == robot and env.metadata["task"] == "reach"


@pytest.mark.parametrize("robot", ARMS)
@pytest.mark.parametrize("control", ["joints", "hand_steps"])
def test_labels_cover_the_observation_in_order(robot: str, control: str) -> None:
    env = _env(robot, control)
    observation, _ = env.reset(seed=1)
    labels = check_labels(env.get_observation_labels(), observation.size)
    assert [start for _, start, _ in labels] == [0] + [stop for _, _, stop in labels[:-1]]
    assert labels[-1][2] == observation.size == env.observation_space.shape[0]
    names = [name for name, _, _ in labels]
    hand = ["hand_target"] if control != "joints" else []
    assert names == ARM_PARTS + hand + ["target_position", "target_from_hand"]
    parts = {name: observation[start:stop] for name, start, stop in labels}
    assert parts["joint_angles"].size == parts["joint_velocities"].size == 7
    assert np.allclose(parts["hand_position"], env.hand_position)
    assert parts["gripper"][0] == pytest.approx(1.0, abs=0.02)  # open at home
    assert np.allclose(parts["target_from_hand"], parts["target_position"] - parts["hand_position"])


def test_a_panda_without_its_hand_has_joint_control_and_no_gripper_part() -> None:
    env = ArmEnv("franka_emika_panda", entry="panda_nohand")
    observation, _ = env.reset(seed=0)
    names = [name for name, _, _ in env.get_observation_labels()]
    assert names == ["joint_angles", "joint_velocities", "hand_position"]
    assert observation.size == 17 and env.action_space.shape == (7,)


@pytest.mark.parametrize("control", ["hand_steps", "hand"])
def test_hand_control_on_an_arm_without_a_hand_is_a_one_line_error(control: str) -> None:
    with pytest.raises(RobotError, match="needs an arm with a hand.*use control='joints'") as caught:
        ArmEnv("franka_emika_panda", entry="panda_nohand", control=control)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"control": "hand_steps", "hand_levels": 4}, "hand_levels must be an odd integer >= 3"),
        ({"control": "hand", "hand_step": 0}, "hand_step must be a number of metres > 0"),
        ({"control": "hand_steps", "workspace": -0.1}, "workspace must be a number of metres > 0"),
        ({"control": "fingers"}, "control must be one of joints, hand_steps, hand"),
    ],
)
def test_impossible_settings_are_one_line_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(RobotError, match=message) as caught:
        ArmReachEnv("ufactory_xarm7", **kwargs)
    assert "\n" not in str(caught.value)


def test_unknown_arms_and_entries_are_errors_naming_the_choices() -> None:
    with pytest.raises(RobotError, match="not an arm; the arms are franka_emika_panda, ufactory_xarm7"):
        ArmReachEnv("unitree_h1")
    with pytest.raises(RobotError, match="entry 'mjx_panda' of franka_emika_panda is not supported"):
        ArmReachEnv("franka_emika_panda", entry="mjx_panda")


@pytest.mark.parametrize("robot", ARMS)
def test_render_gives_a_240_by_320_frame_of_the_scene(robot: str) -> None:
    env = _env(robot, "hand_steps")
    frame = env.render()
    assert isinstance(frame, np.ndarray) and frame.shape == (240, 320, 3) and frame.dtype == np.uint8
    assert frame.std() > 10  # a picture, not a blank
    for _ in range(10):
        env.step([4, 2, 0, 1])  # the hand forward and down, the gripper closing
    assert not np.array_equal(env.render(), frame)
