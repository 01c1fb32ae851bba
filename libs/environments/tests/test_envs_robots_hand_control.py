"""Hand control (platform_envs.robots.hand_control): settings, action spaces, and mink's IK
driving the real Menagerie arms in MuJoCo: targets reached within 1 cm, the workspace's
boundary kept, one step moving the hand by at most hand_step."""

from __future__ import annotations

import copy
import functools
import pickle
from typing import Any

import numpy as np
import pytest
from platform_envs.adapters.mujoco_rendering import select_gl_backend

select_gl_backend()  # before MuJoCo is imported

import mujoco  # noqa: E402
from platform_envs.robots.arm_scene import ArmLayout, arm_spec, home_qpos  # noqa: E402
from platform_envs.robots.arms import ARMS, PANDA_NOHAND, ArmFacts, arm_facts  # noqa: E402
from platform_envs.robots.errors import RobotError  # noqa: E402
from platform_envs.robots.hand_control import HandController, HandSettings  # noqa: E402

DECISION_SUBSTEPS = 25  # 20 decisions a second on the arms' 0.002 s
STAY = [2, 2, 2, 0]  # hand_levels 5: the middle level of each axis, gripper open


@functools.cache
def _scene(robot: str) -> tuple[Any, ArmLayout]:
    spec, layout = arm_spec(arm_facts(robot))
    return spec.compile(), layout


def _scene_model(robot: str) -> Any:
    return _scene(robot)[0]


def _arm_at_home(robot: str, **settings: Any) -> tuple[Any, Any, ArmFacts, HandController]:
    model, layout = _scene(robot)
    data = mujoco.MjData(model)
    for name, value in layout.home.qpos.items():
        data.qpos[model.joint(name).qposadr[0]] = value
    for name, value in layout.home.ctrl.items():
        data.ctrl[model.actuator(name).id] = value
    mujoco.mj_forward(model, data)
    source = functools.partial(_scene_model, robot)
    controller = HandController(layout.facts, layout.home, HandSettings(**settings), source)
    return model, data, layout.facts, controller


def _decide(controller: HandController, action: Any, model: Any, data: Any, times: int = 1) -> None:
    for _ in range(times):
        controller.apply(action, data)
        mujoco.mj_step(model, data, nstep=DECISION_SUBSTEPS)


def _hand(model: Any, data: Any, facts: ArmFacts) -> np.ndarray:
    return np.array(data.site(facts.hand_site).xpos)


def test_settings_default_to_joint_control_and_the_documented_hand_options() -> None:
    settings = HandSettings()
    assert (settings.control, settings.hand_step, settings.hand_levels, settings.workspace) == (
        "joints",
        0.02,
        5,
        0.3,
    )
    assert not settings.by_hand
    assert HandSettings(control="hand_steps").by_hand and HandSettings(control="hand").by_hand


@pytest.mark.parametrize("levels", [2, 4, 6])
def test_even_hand_levels_are_a_one_line_error_saying_what_is_allowed(levels: int) -> None:
    with pytest.raises(RobotError, match="hand_levels must be an odd integer >= 3") as caught:
        HandSettings(control="hand_steps", hand_levels=levels)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("hand_step", 0.0, "hand_step must be a number of metres > 0"),
        ("hand_step", -0.01, "hand_step must be a number of metres > 0"),
        ("workspace", 0, "workspace must be a number of metres > 0"),
        ("workspace", float("nan"), "workspace must be a number of metres > 0"),
        ("hand_step", "0.02", "hand_step must be a number of metres > 0"),
        ("hand_levels", 1, "hand_levels must be an odd integer >= 3"),
        ("hand_levels", -3, "hand_levels must be an odd integer >= 3"),
        ("hand_levels", 5.0, "hand_levels must be an odd integer >= 3"),
        ("hand_levels", True, "hand_levels must be an odd integer >= 3"),
        ("control", "joint", "control must be one of joints, hand_steps, hand"),
    ],
)
def test_bad_hand_settings_are_one_line_errors(field: str, value: Any, message: str) -> None:
    with pytest.raises(RobotError, match=message) as caught:
        HandSettings(**{"control": "hand_steps", field: value})
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("control", ["hand_steps", "hand"])
def test_hand_control_on_an_arm_without_a_hand_is_an_error(control: str) -> None:
    settings = HandSettings(control=control)
    with pytest.raises(RobotError, match="needs an arm with a hand.*use control='joints'"):
        settings.check_robot(PANDA_NOHAND)
    HandSettings(control="joints").check_robot(PANDA_NOHAND)  # joint control needs no hand
    for facts in ARMS.values():
        settings.check_robot(facts)


def test_action_spaces_are_levels_per_axis_or_a_box_in_units_of_hand_step() -> None:
    stepped = HandSettings(control="hand_steps", hand_levels=7).action_space()
    assert list(stepped.nvec) == [7, 7, 7, 2]
    box = HandSettings(control="hand").action_space()
    assert list(box.low) == [-1, -1, -1, 0] and list(box.high) == [1, 1, 1, 1]


@pytest.mark.parametrize("levels", [3, 5, 7])
def test_levels_move_the_target_by_a_fraction_of_hand_step_the_middle_stays(levels: int) -> None:
    settings = HandSettings(control="hand_steps", hand_step=0.03, hand_levels=levels)
    middle = (levels - 1) // 2
    moves = [settings.decode([level, middle, middle, 0])[0][0] for level in range(levels)]
    assert moves[middle] == 0.0
    assert moves[0] == pytest.approx(-0.03) and moves[-1] == pytest.approx(0.03)
    assert np.allclose(np.diff(moves), 0.03 / middle)
    assert settings.decode([middle, middle, middle, 1])[1] is True
    assert settings.decode([middle, middle, middle, 0])[1] is False
    continuous = HandSettings(control="hand", hand_step=0.03)
    move, closed = continuous.decode([0.5, -2.0, 0.0, 0.7])
    assert np.allclose(move, [0.015, -0.03, 0.0]) and closed


@pytest.mark.parametrize("robot", sorted(ARMS))
def test_hand_control_reaches_targets_within_one_centimetre(robot: str) -> None:
    model, data, facts, controller = _arm_at_home(robot, control="hand")
    home = controller.home_position
    for offset in ([0.12, -0.15, -0.2], [-0.2, 0.18, 0.1], [0.05, 0.1, -0.28]):
        goal = home + offset
        for _ in range(100):  # 5 s at 20 decisions a second
            action = np.append(
                np.clip((goal - controller.target) / controller.settings.hand_step, -1, 1), 0.0
            )
            _decide(controller, action, model, data)
        assert np.allclose(controller.target, goal)
        error = np.linalg.norm(_hand(model, data, facts) - goal)
        assert error < 0.01, f"{robot}: the hand is {error * 100:.1f} cm from {goal}"
    assert controller.ik_decisions == 300 and controller.ik_seconds_total > 0


@pytest.mark.parametrize("robot", sorted(ARMS))
def test_the_target_stops_at_the_workspace_boundary_and_the_hand_follows(robot: str) -> None:
    model, data, facts, controller = _arm_at_home(robot, control="hand_steps", workspace=0.1)
    down_and_left = [2, 0, 0, 0]
    _decide(controller, down_and_left, model, data, times=30)  # 30 steps of 2 cm: 60 cm asked
    boundary = controller.home_position + [0.0, -0.1, -0.1]
    assert np.array_equal(controller.target, boundary)
    _decide(controller, STAY, model, data, times=40)
    assert np.linalg.norm(_hand(model, data, facts) - boundary) < 0.01


@pytest.mark.parametrize("robot", sorted(ARMS))
def test_one_hand_step_moves_the_hand_by_at_most_hand_step_along_its_axis(robot: str) -> None:
    model, data, facts, controller = _arm_at_home(robot, control="hand_steps")
    _decide(controller, STAY, model, data, times=10)
    for axis in range(3):
        for level in (0, 4):
            before = _hand(model, data, facts)
            action = list(STAY)
            action[axis] = level
            _decide(controller, action, model, data)
            _decide(controller, STAY, model, data, times=20)  # then stay a second
            moved = _hand(model, data, facts) - before
            along, across = moved[axis], np.delete(moved, axis)
            assert 0.017 < abs(along) <= 0.02 + 5e-4, f"{robot} axis {axis}: moved {moved}"
            assert np.sign(along) == (1 if level == 4 else -1)
            assert np.abs(across).max() < 0.002, f"{robot} axis {axis}: moved {moved}"


def test_the_gripper_closes_and_opens_on_command() -> None:
    model, data, facts, controller = _arm_at_home("franka_emika_panda", control="hand_steps")
    gripper = model.actuator(facts.gripper_actuator).id
    _decide(controller, [2, 2, 2, 1], model, data, times=10)
    assert data.ctrl[gripper] == facts.gripper_closed
    fingers = [data.joint(name).qpos[0] for name in facts.gripper_joints]
    assert max(fingers) < 0.005  # closed on nothing
    _decide(controller, STAY, model, data, times=10)
    assert data.ctrl[gripper] == facts.gripper_open
    assert min(data.joint(name).qpos[0] for name in facts.gripper_joints) > 0.035


def test_the_controller_pickles_its_target_not_mink_and_continues_identically() -> None:
    model, data, _, controller = _arm_at_home("ufactory_xarm7", control="hand_steps")
    _decide(controller, [4, 1, 3, 1], model, data, times=5)
    restored = pickle.loads(pickle.dumps(controller))
    assert restored._ik is None and restored._model is None  # neither mink's objects nor the model
    assert np.array_equal(restored.target, controller.target) and restored.gripper_closed
    twin = mujoco.MjData(model)
    twin_state = np.empty(mujoco.mj_stateSize(model, mujoco.mjtState.mjSTATE_INTEGRATION))
    mujoco.mj_getState(model, data, twin_state, mujoco.mjtState.mjSTATE_INTEGRATION)
    mujoco.mj_setState(model, twin, twin_state, mujoco.mjtState.mjSTATE_INTEGRATION)
    for action in ([0, 2, 4, 0], [3, 3, 1, 1], [2, 2, 2, 0]):
        controller.apply(action, data)
        restored.apply(action, twin)
        assert np.array_equal(data.ctrl, twin.ctrl)
        mujoco.mj_step(model, data, nstep=DECISION_SUBSTEPS)
        mujoco.mj_step(model, twin, nstep=DECISION_SUBSTEPS)
    assert np.array_equal(data.qpos, twin.qpos)


def test_a_hand_heavier_than_built_sags_the_controller_knows_the_masses_as_built() -> None:
    model, layout = _scene("franka_emika_panda")
    heavier = copy.copy(model)  # the environment's own model, edited by a world change
    heavier.body_mass[heavier.body("hand").id] *= 8
    sags = []
    for physics in (model, heavier):
        data = mujoco.MjData(physics)
        data.qpos[:] = home_qpos(physics, layout.home)
        mujoco.mj_forward(physics, data)
        source = functools.partial(_scene_model, "franka_emika_panda")
        controller = HandController(layout.facts, layout.home, HandSettings(control="hand_steps"), source)
        _decide(controller, STAY, physics, data, times=40)
        sags.append(controller.home_position[2] - _hand(physics, data, layout.facts)[2])
    assert abs(sags[0]) < 0.001  # as built: held where it should be
    assert sags[1] > 0.003  # heavier: lower than the controller thinks
