"""ArmEnv: a Menagerie arm beside a table, commanded joint by joint or by hand.

The base of the arms' tasks (reach, pick and place). It builds the scene (robots/arm_scene.py,
plus what the task adds in `_edit_scene`), and gives:

- control "joints": a Box of every actuator's ctrl range (the arm's position targets in rad
  and the gripper's command), action_names the actuator names;
- control "hand_steps" or "hand": hand control (robots/hand_control.py), action_names
  hand_x, hand_y, hand_z, gripper.

Observation parts (labelled): joint_angles and joint_velocities of the arm's joints,
hand_position (the hand site, world frame, m), gripper (how open it is: 1 open, 0 closed; on
arms with a hand), hand_target (where hand control is taking the hand; hand control only),
then the task's own parts.
"""

from __future__ import annotations

import functools
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from platform_envs.robots.arm_scene import (
    DEFAULT_CAMERA,
    ArmLayout,
    arm_spec,
    home_ctrl,
    home_qpos,
)
from platform_envs.robots.arms import ArmFacts, arm_facts
from platform_envs.robots.hand_control import (
    DEFAULT_HAND_LEVELS,
    DEFAULT_HAND_STEP,
    DEFAULT_WORKSPACE,
    HAND_ACTION_NAMES,
    HandController,
    HandSettings,
)
from platform_envs.robots.mujoco_env import MujocoRobotEnv

# 20 decisions a second on the arms' 0.002 s physics step
DEFAULT_SUBSTEPS = 25

_SCENES: dict[tuple[type, ArmFacts], tuple[Any, ArmLayout]] = {}


def _model_as_built(cls: type[ArmEnv], facts: ArmFacts) -> Any:
    """`cls`' scene of `facts` as compiled (picklable by reference, for HandController)."""
    return cls.compiled_scene(facts)[0]


class ArmEnv(MujocoRobotEnv):
    """A Menagerie arm beside a table (see the module docstring).

    Args:
        robot: "franka_emika_panda" or "ufactory_xarm7".
        control: "joints", "hand_steps" or "hand".
        hand_step, hand_levels, workspace: hand control's settings (HandSettings); workspace
            also bounds where tasks put their targets under joint control.
        entry: the Menagerie entry point (None: the arm's scene; "panda_nohand" gives a Panda
            without its hand, for joint control).
        **options: the base's (substeps, time_limit, render_mode, render_quality, ...).

    Raises:
        RobotError: an unknown arm or entry, bad hand settings, or hand control on an arm
            without a hand.
    """

    task: ClassVar[str] = "arm"
    scene_has_target: ClassVar[bool] = False

    def __init__(
        self,
        robot: str = "franka_emika_panda",
        *,
        control: str = "joints",
        hand_step: float = DEFAULT_HAND_STEP,
        hand_levels: int = DEFAULT_HAND_LEVELS,
        workspace: float = DEFAULT_WORKSPACE,
        entry: str | None = None,
        **options: Any,
    ) -> None:
        facts = arm_facts(robot, entry)
        settings = HandSettings(
            control=control, hand_step=hand_step, hand_levels=hand_levels, workspace=workspace
        )
        settings.check_robot(facts)
        model, layout = self.compiled_scene(facts)
        # everything the hooks use is set before the base's constructor, which may call them
        self.facts = facts
        self.layout = layout
        self.settings = settings
        self._index_arm(model)
        self.hand_controller = (
            HandController(
                facts, layout.home, settings, functools.partial(_model_as_built, type(self), facts)
            )
            if settings.by_hand
            else None
        )
        self._prepare_task(model)
        options.setdefault("camera", DEFAULT_CAMERA)
        options.setdefault("substeps", DEFAULT_SUBSTEPS)
        super().__init__(model, robot=robot, task=self.task, **options)
        if self.hand_controller is not None:
            self.action_space = self.hand_controller.action_space
            action_names = list(HAND_ACTION_NAMES)
        else:
            low, high = model.actuator_ctrlrange.T
            self.action_space = spaces.Box(low=low.copy(), high=high.copy(), dtype=np.float64)
            action_names = [model.actuator(i).name for i in range(model.nu)]
        self.metadata = {**self.metadata, "control": control, "action_names": action_names}

    # -- the scene ------------------------------------------------------------------------------

    @classmethod
    def compiled_scene(cls, facts: ArmFacts) -> tuple[Any, ArmLayout]:
        """The task's scene for `facts`, compiled once per process (the model as built)."""
        key = (cls, facts)
        if key not in _SCENES:
            spec, layout = arm_spec(facts, target=cls.scene_has_target)
            cls._edit_scene(spec, layout)
            _SCENES[key] = (spec.compile(), layout)
        return _SCENES[key]

    def _built_model(self) -> Any:
        return self.compiled_scene(self.facts)[0]

    @classmethod
    def _edit_scene(cls, spec: Any, layout: ArmLayout) -> None:
        """Add the task's things to the arm's scene before it compiles (nothing here)."""

    def _prepare_task(self, model: Any) -> None:
        """Set the task's attributes from the model as built, before the base's constructor."""

    def _index_arm(self, model: Any) -> None:
        facts = self.facts
        joints = [model.joint(name) for name in facts.arm_joints]
        self._arm_qpos = np.array([joint.qposadr[0] for joint in joints])
        self._arm_dofs = np.array([joint.dofadr[0] for joint in joints])
        self._hand_site = model.site(facts.hand_site).id
        self._gripper_qpos = np.array(
            [model.joint(name).qposadr[0] for name in facts.gripper_joints], dtype=int
        )
        self._home_qpos = home_qpos(model, self.layout.home)
        self._home_ctrl = home_ctrl(model, self.layout.home)

    # -- what the arm senses --------------------------------------------------------------------

    @property
    def hand_position(self) -> np.ndarray:
        """The hand site's world position (m)."""
        return np.array(self.data.site_xpos[self._hand_site])

    @property
    def gripper_opening(self) -> float:
        """How open the gripper is, from its joints: 1 fully open, 0 closed."""
        facts = self.facts
        positions = self.data.qpos[self._gripper_qpos]
        fraction = (positions - facts.gripper_joint_closed) / (
            facts.gripper_joint_open - facts.gripper_joint_closed
        )
        return float(np.clip(fraction.mean(), 0.0, 1.0))

    def _observation_parts(self) -> list[tuple[str, np.ndarray]]:
        data = self.data
        parts = [
            ("joint_angles", data.qpos[self._arm_qpos]),
            ("joint_velocities", data.qvel[self._arm_dofs]),
            ("hand_position", self.hand_position),
        ]
        if self.facts.has_hand:
            parts.append(("gripper", np.array([self.gripper_opening])))
        if self.hand_controller is not None:
            parts.append(("hand_target", self.hand_controller.target.copy()))
        return parts + self._task_observation_parts()

    def _task_observation_parts(self) -> list[tuple[str, np.ndarray]]:
        """The task's own observation parts, after the arm's."""
        return []

    # -- acting ----------------------------------------------------------------------------------

    def _apply_action(self, action: np.ndarray) -> None:
        if self.hand_controller is not None:
            self.hand_controller.apply(action, self.data)
        else:
            low, high = self.model.actuator_ctrlrange.T
            self.data.ctrl[:] = np.clip(np.asarray(action, dtype=np.float64), low, high)

    def _reset_task(self, rng: np.random.Generator) -> None:
        """The arm at home, at rest, its controls at home; hand control's target at home."""
        import mujoco

        data = self.data
        data.qpos[:] = self._home_qpos
        data.qvel[:] = 0.0
        data.ctrl[:] = self._home_ctrl
        if self.hand_controller is not None:
            self.hand_controller.reset()
        mujoco.mj_forward(self.model, data)
