"""PickPlaceEnv: put the block in the bin under the green ball (the Menagerie arms' "pick_place").

The Panda or the xArm7 beside a table with a block and two bins (robots/pick_place_scene.py).
Each episode draws, from its seed, which bin is the target (the green ball floats over it) and
where the block starts (the near half of the table, turned a little).

- control: "hand_steps" by default (the catalog's pick-place entries), "hand" or "joints".
- 100 physics steps a decision by default: 5 decisions a second on the arms' 0.002 s.
- observation: the arm's parts (ArmEnv: joint_angles, joint_velocities, hand_position, gripper,
  hand_target under hand control), then block_position, block_from_hand (block minus hand),
  ball_position (over the target bin) and bin_positions (each bin's centre at its base, bin 0
  then bin 1), all in metres, world frame.
- info["is_success"] on every step: the block is at rest (below `REST_SPEED` and
  `REST_SPIN`) inside the target bin and released (the gripper commanded open and no finger
  touching the block). The episode ends (terminated) on success; it is truncated at its time
  limit (60 s by default).
- info["teacher_action"] on every reset and step under hand control: the scripted expert's
  suggestion for the next action (robots/teacher.py), in the action space's form (4 ints for
  hand_steps, 4 floats for hand), from the true state.
- reward: the sum of four shaped terms, each in info["reward_terms"]:
  reach = 1 - tanh(10 * distance from the hand site to the block) (1 once the block is in
  the target bin); grasp = 1 while the gripper is closed with every finger on the block (and
  once it is in the target bin); carry = 1 - tanh(5 * horizontal distance from the block to
  the target bin's centre) while grasped or in the target bin, else 0; place = 1 while the
  block is in the target bin, `SUCCESS_BONUS` on the step that succeeds. So the terms grow
  with each stage and a placed, released block scores most.

Hand control needs a `workspace` that reaches the block and the bins (0.295 m: the block lies
that far below the hand's home); a smaller one is a RobotError at construction.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from platform_envs.robots.arm_env import ArmEnv
from platform_envs.robots.arm_scene import ArmLayout
from platform_envs.robots.errors import RobotError
from platform_envs.robots.pick_place_scene import (
    BIN_INNER_HALF,
    PickPlaceScene,
    add_pick_place,
    draw_episode,
    pick_place_layout,
)
from platform_envs.robots.teacher import PickPlaceTeacher, TeacherView, teacher_for

DEFAULT_CONTROL = "hand_steps"
DEFAULT_SUBSTEPS = 100
DEFAULT_TIME_LIMIT = 60.0  # s
REST_SPEED = 0.02  # m/s: the block is at rest below this speed
REST_SPIN = 0.5  # rad/s: and below this angular speed
SUCCESS_BONUS = 5.0
REACH_SCALE = 10.0  # 1/m
CARRY_SCALE = 5.0  # 1/m


def _needed_workspace(layout: ArmLayout) -> float:
    """The smallest hand-control workspace (m) that reaches the block, the bins and the table."""
    places = pick_place_layout(layout)
    home = np.array(layout.home.hand_position)
    # the hand's site goes as low as the block's centre on the table, and over the bins' insides
    corners = [
        np.array([x + sx * BIN_INNER_HALF, y + sy * BIN_INNER_HALF, places.block_rest_height])
        for x, y, _ in places.bin_centers
        for sx in (-1, 1)
        for sy in (-1, 1)
    ]
    corners += [np.array([*places.start_low, places.block_rest_height])]
    corners += [np.array([*places.start_high, places.block_rest_height])]
    return float(max(np.max(np.abs(corner - home)) for corner in corners))


class PickPlaceEnv(ArmEnv):
    """Pick up the block and put it in the bin under the green ball (see the module docstring).

    Args:
        robot: "franka_emika_panda" or "ufactory_xarm7".
        control: "hand_steps" (default), "hand" or "joints".
        substeps: physics steps per decision (default 100: 5 decisions a second).
        time_limit: seconds of simulated time before the episode is truncated (None: never).
        **options: ArmEnv's and the base's (hand_step, hand_levels, workspace, render_mode, ...).

    Raises:
        RobotError: what ArmEnv raises, or hand control with a workspace too small for the task.
    """

    task: ClassVar[str] = "pick_place"
    scene_has_target: ClassVar[bool] = False

    def __init__(
        self,
        robot: str = "franka_emika_panda",
        *,
        control: str = DEFAULT_CONTROL,
        substeps: int = DEFAULT_SUBSTEPS,
        time_limit: float | None = DEFAULT_TIME_LIMIT,
        **options: Any,
    ) -> None:
        super().__init__(robot, control=control, substeps=substeps, time_limit=time_limit, **options)

    def _prepare_task(self, model: Any) -> None:
        needed = _needed_workspace(self.layout)
        if self.hand_controller is not None and self.settings.workspace < needed:
            raise RobotError(
                f"pick_place needs workspace >= {np.ceil(needed * 1000) / 1000} m to reach the block "
                f"and the bins, not {self.settings.workspace}"
            )
        self.places = pick_place_layout(self.layout)
        self.scene = PickPlaceScene(model, self.places)
        self.target_bin = 0
        self.teacher: PickPlaceTeacher | None = None
        if self.hand_controller is not None:
            controller = self.hand_controller
            self.teacher = teacher_for(self.settings, controller.low, controller.high)

    # -- the scene ------------------------------------------------------------------------------

    @classmethod
    def _edit_scene(cls, spec: Any, layout: ArmLayout) -> None:
        add_pick_place(spec, pick_place_layout(layout))

    def _reset_task(self, rng: np.random.Generator) -> None:
        super()._reset_task(rng)
        import mujoco

        episode = draw_episode(self.places, rng)
        self.target_bin = episode.target_bin
        self.scene.place(self.model, self.data, episode, self._block_shift())
        mujoco.mj_forward(self.model, self.data)

    def _block_shift(self) -> np.ndarray:
        """How far a world change has moved the block's start from where the scene built it (a
        "position" change moves a free body's qpos0): the episode's draw moves with it."""
        built, _ = self.compiled_scene(self.facts)
        address = self.scene.block_qpos
        return np.asarray(self.model.qpos0[address : address + 3] - built.qpos0[address : address + 3])

    # -- what the task sees ---------------------------------------------------------------------

    @property
    def block_position(self) -> np.ndarray:
        """The block centre's world position (m)."""
        return self.scene.block_position(self.data)

    @property
    def target_bin_center(self) -> np.ndarray:
        """The target bin's centre at its base (m)."""
        return np.array(self.scene.bin_centers(self.model)[self.target_bin], dtype=np.float64)

    @property
    def block_in_target_bin(self) -> bool:
        """Whether the block's centre lies inside the target bin."""
        return self.scene.bin_holding(self.model, self.block_position) == self.target_bin

    @property
    def gripper_commanded_open(self) -> bool:
        """Whether the gripper's command is nearer its open value than its closed one."""
        facts = self.facts
        command = float(self.data.ctrl[self.model.actuator(facts.gripper_actuator).id])
        return abs(command - facts.gripper_open) < abs(command - facts.gripper_closed)

    @property
    def grasped(self) -> bool:
        """Whether the gripper is commanded closed with every finger touching the block."""
        return not self.gripper_commanded_open and all(self.scene.fingers_touching_block(self.data))

    @property
    def released(self) -> bool:
        """Whether the gripper is commanded open and no finger touches the block."""
        return self.gripper_commanded_open and not any(self.scene.fingers_touching_block(self.data))

    @property
    def block_at_rest(self) -> bool:
        """Whether the block is still (below REST_SPEED and REST_SPIN)."""
        speed, spin = self.scene.block_speed(self.data)
        return speed < REST_SPEED and spin < REST_SPIN

    @property
    def success(self) -> bool:
        """The block at rest in the target bin, released."""
        return self.block_in_target_bin and self.block_at_rest and self.released

    def _task_observation_parts(self) -> list[tuple[str, np.ndarray]]:
        block = self.block_position
        return [
            ("block_position", block),
            ("block_from_hand", block - self.hand_position),
            ("ball_position", self.scene.ball_position(self.data)),
            ("bin_positions", self.scene.bin_centers(self.model).reshape(-1)),
        ]

    # -- scoring ----------------------------------------------------------------------------------

    def _reward(self) -> tuple[float, dict[str, float]]:
        block = self.block_position
        in_bin = self.block_in_target_bin
        grasped = self.grasped
        distance = float(np.linalg.norm(block - self.hand_position))
        reach = 1.0 if in_bin else 1.0 - float(np.tanh(REACH_SCALE * distance))
        carry = 0.0
        if grasped or in_bin:
            carry = 1.0 - float(np.tanh(CARRY_SCALE * np.linalg.norm(block[:2] - self.target_bin_center[:2])))
        place = (SUCCESS_BONUS if self.success else 1.0) if in_bin else 0.0
        terms = {"reach": reach, "grasp": float(grasped or in_bin), "carry": carry, "place": place}
        return float(sum(terms.values())), terms

    def _terminated(self) -> bool:
        return self.success

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"is_success": self.success}
        if self.teacher is not None:
            info["teacher_action"] = self.teacher.action(self.teacher_view())
        return info

    def teacher_view(self) -> TeacherView:
        """The true state the teacher plans from (hand control only)."""
        controller = self.hand_controller
        if controller is None:
            raise RobotError("the teacher suggests hand actions: use control 'hand_steps' or 'hand'")
        block = self.block_position
        return TeacherView(
            hand_target=controller.target.copy(),
            hand_position=self.hand_position,
            gripper_closed=bool(controller.gripper_closed),
            gripper_opening=self.gripper_opening,
            fingers_touching=self.scene.fingers_touching_block(self.data),
            block_position=block,
            target_bin_center=self.target_bin_center,
            block_in_target_bin=self.block_in_target_bin,
        )
