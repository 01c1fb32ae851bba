"""Hand control: an arm commanded by where its hand should go, through mink's inverse kinematics.

`HandSettings` are the session's choices (kwargs control, hand_step, hand_levels, workspace),
checked once with one-line errors. `HandController` turns each hand action into the arm's
position-actuator commands and the gripper's:

- "hand_steps": MultiDiscrete([L, L, L, 2]) for x, y, z and the gripper, L = hand_levels (odd;
  the middle level stays). Level i moves the hand's target by (i - m) / m * hand_step along its
  axis, m = (L - 1) / 2, so the outermost levels move it by hand_step. Gripper 0 opens, 1 closes.
- "hand": Box([-1, -1, -1, 0], [1, 1, 1, 1]), the same in continuous form: x, y, z in units of
  hand_step, the gripper closed at 0.5 and above.

The target stays within the hand's home +- workspace on each axis (a move past the boundary
stops at it). Each decision, differential IK (mink: a FrameTask on the hand site for the
target position with the home orientation, a small PostureTask toward home for the redundant
joint, the joints' limits; the daqp QP solver) runs a few iterations from the previous
solution, and the arm's position actuators are commanded to the solution plus a feed-forward
that holds it against gravity: each actuator pushes by gain * (ctrl - q), so in steady state
the joint settles at ctrl - gravity / gain, and ctrl = q + gravity(q) / gain puts it at q. The
gravity comes from the model as built, not from the environment's (possibly changed) model, as a
real arm's controller knows its nominal masses: a world change that makes the hand heavier shows as sag.

The target, the gripper command and the last IK solution are plain numpy state and pickle with
the environment; the kinematic model and mink's objects do not pickle (they are fetched and
rebuilt from the model as built when next needed).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces

from platform_envs.robots.arm_scene import ArmHome, home_qpos
from platform_envs.robots.arms import ArmFacts
from platform_envs.robots.errors import RobotError

CONTROLS = ("joints", "hand_steps", "hand")
HAND_CONTROLS = ("hand_steps", "hand")
HAND_ACTION_NAMES = ("hand_x", "hand_y", "hand_z", "gripper")
DEFAULT_HAND_STEP = 0.02
DEFAULT_HAND_LEVELS = 5
DEFAULT_WORKSPACE = 0.3
IK_SOLVER = "daqp"
IK_MAX_ITERATIONS = 4  # per decision; the target moves at most hand_step per decision
IK_TOLERANCE = 1e-4  # m: stop iterating once the solution's hand is this close to the target
IK_DAMPING = 1e-3  # Levenberg-Marquardt damping of every joint
HAND_LM_DAMPING = 1.0  # and the hand task's, growing with its error: calm toward unreachable targets
IK_MAX_JOINT_STEP = 0.1  # rad per iteration at most, so the solution moves smoothly
POSITION_COST = 1.0
ORIENTATION_COST = 0.5
POSTURE_COST = 1e-2


@dataclasses.dataclass(frozen=True)
class HandSettings:
    """How a session commands an arm: by joint or by hand (kwargs control and the hand options).

    Raises:
        RobotError: an unknown control, hand_step or workspace not > 0, hand_levels not an
            odd integer >= 3.
    """

    control: str = "joints"
    hand_step: float = DEFAULT_HAND_STEP
    hand_levels: int = DEFAULT_HAND_LEVELS
    workspace: float = DEFAULT_WORKSPACE

    def __post_init__(self) -> None:
        if self.control not in CONTROLS:
            raise RobotError(f"control must be one of {', '.join(CONTROLS)}, not {self.control!r}")
        for name in ("hand_step", "workspace"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not np.isfinite(value)
                or value <= 0
            ):
                raise RobotError(f"{name} must be a number of metres > 0, not {value!r}")
        levels = self.hand_levels
        if (
            isinstance(levels, bool)
            or not isinstance(levels, int | np.integer)
            or levels < 3
            or levels % 2 == 0
        ):
            raise RobotError(
                f"hand_levels must be an odd integer >= 3 (the middle level stays), not {levels!r}"
            )

    @property
    def by_hand(self) -> bool:
        """Whether the arm is commanded by hand ("hand_steps" or "hand") rather than by joint."""
        return self.control in HAND_CONTROLS

    def check_robot(self, facts: ArmFacts) -> None:
        """Raise RobotError when hand control is asked of an arm without a hand."""
        if self.by_hand and not facts.has_hand:
            raise RobotError(
                f"control {self.control!r} needs an arm with a hand; {facts.display_name} has none: "
                "use control='joints'"
            )

    def action_space(self) -> spaces.Space[Any]:
        """The hand action space: MultiDiscrete([L, L, L, 2]) or Box([-1]*3+[0], [1]*3+[1])."""
        if self.control == "hand_steps":
            return spaces.MultiDiscrete([self.hand_levels] * 3 + [2])
        if self.control == "hand":
            return spaces.Box(low=np.array([-1.0, -1.0, -1.0, 0.0]), high=np.ones(4), dtype=np.float64)
        raise RobotError("joint control has no hand action space")

    def decode(self, action: Any) -> tuple[np.ndarray, bool]:
        """The hand target's move (m, shape (3,)) and whether the gripper closes, for `action`."""
        values = np.asarray(action, dtype=np.float64).reshape(-1)
        if values.shape != (4,):
            raise RobotError(f"a {self.control} action has 4 entries (x, y, z, gripper), not {values.size}")
        if self.control == "hand_steps":
            middle = (self.hand_levels - 1) / 2
            move = (np.clip(np.rint(values[:3]), 0, self.hand_levels - 1) - middle) / middle
            return move * self.hand_step, bool(values[3] >= 0.5)
        return np.clip(values[:3], -1.0, 1.0) * self.hand_step, bool(values[3] >= 0.5)


class HandIK:
    """mink's differential IK of one arm's hand site (its objects are built on demand, never pickled)."""

    def __init__(self, model: Any, hand_site: str, home_q: np.ndarray, home_rotation: np.ndarray) -> None:
        import mink

        self.mink = mink
        self.configuration = mink.Configuration(model, home_q)
        self.hand = mink.FrameTask(
            frame_name=hand_site,
            frame_type="site",
            position_cost=POSITION_COST,
            orientation_cost=ORIENTATION_COST,
            lm_damping=HAND_LM_DAMPING,
        )
        self.posture = mink.PostureTask(model, cost=POSTURE_COST)
        self.posture.set_target(home_q)
        self.limits = [mink.ConfigurationLimit(model)]
        self.rotation = mink.SO3.from_matrix(home_rotation)
        self.site_id = model.site(hand_site).id

    def solve(self, q: np.ndarray, target: np.ndarray, iterations: int = IK_MAX_ITERATIONS) -> np.ndarray:
        """The configuration (nq), from `q`, whose hand site is nearest `target` (home orientation)
        after at most `iterations` steps."""
        mink = self.mink
        configuration = self.configuration
        configuration.update(q)
        self.hand.set_target(mink.SE3.from_rotation_and_translation(self.rotation, target))
        for _ in range(iterations):
            if np.linalg.norm(configuration.data.site_xpos[self.site_id] - target) < IK_TOLERANCE:
                break
            velocity = mink.solve_ik(
                configuration,
                [self.hand, self.posture],
                dt=1.0,
                solver=IK_SOLVER,
                damping=IK_DAMPING,
                limits=self.limits,
            )
            largest = float(np.abs(velocity).max())
            if largest > IK_MAX_JOINT_STEP:
                velocity *= IK_MAX_JOINT_STEP / largest
            configuration.integrate_inplace(velocity, 1.0)
        return np.asarray(configuration.data.qpos.copy())

    def hand_position(self) -> np.ndarray:
        """Where the last solution puts the hand site."""
        return np.array(self.configuration.data.site_xpos[self.site_id])

    def gravity(self) -> np.ndarray:
        """The joint torques that hold the last solution still against gravity (nv,)."""
        import mujoco

        data = self.configuration.data  # its qvel stays zero: only gravity remains
        torques = np.zeros(self.configuration.model.nv)
        mujoco.mj_rne(self.configuration.model, data, 0, torques)
        return torques


class HandController:
    """Commands an arm's actuators from hand actions (see the module's docstring).

    Args:
        facts: the arm (it must have a hand).
        home: its home pose.
        settings: the hand settings (control "hand_steps" or "hand").
        model_source: returns the environment's model as built; a picklable callable (a
            module-level function or a partial of one), called again after unpickling. The
            controller only reads that model, so one model as built can serve every
            environment of a process while world changes edit each environment's own copy.
    """

    def __init__(
        self, facts: ArmFacts, home: ArmHome, settings: HandSettings, model_source: Callable[[], Any]
    ) -> None:
        if not settings.by_hand:
            raise RobotError("HandController needs control 'hand_steps' or 'hand'")
        settings.check_robot(facts)
        assert facts.gripper_actuator is not None  # check_robot
        self.facts = facts
        self.settings = settings
        self.action_space = settings.action_space()
        self.home_position = np.array(home.hand_position, dtype=np.float64)
        self.home_rotation = np.array(home.hand_rotation, dtype=np.float64).reshape(3, 3)
        self.low = self.home_position - settings.workspace
        self.high = self.home_position + settings.workspace
        self._home = home
        self._model_source = model_source
        self._model: Any = None
        self._ik: HandIK | None = None
        model = self._kinematic_model()
        joint_ids = [model.joint(name).id for name in facts.arm_joints]
        self._arm_qpos = np.array([model.jnt_qposadr[j] for j in joint_ids])
        self._arm_dofs = np.array([model.jnt_dofadr[j] for j in joint_ids])
        self._arm_actuators = np.array([model.actuator(name).id for name in facts.arm_actuators])
        self._gripper_actuator = int(model.actuator(facts.gripper_actuator).id)
        self._home_q = home_qpos(model, home)
        # state (numpy: pickles)
        self.target = self.home_position.copy()
        self.gripper_closed = False
        self.solution = self._home_q.copy()
        # timing of the IK (not state: it differs from run to run)
        self.last_ik_seconds = 0.0
        self.ik_seconds_total = 0.0
        self.ik_decisions = 0

    def reset(self) -> None:
        """Target at home, gripper open, the IK's solution the home pose."""
        self.target = self.home_position.copy()
        self.gripper_closed = False
        self.solution = self._home_q.copy()

    def apply(self, action: Any, data: Any) -> None:
        """Move the target by `action`, solve the IK, and write the arm's and gripper's ctrl."""
        move, closed = self.settings.decode(action)
        self.target = np.clip(self.target + move, self.low, self.high)
        self.gripper_closed = closed
        started = time.perf_counter()
        ik = self._inverse_kinematics()
        self.solution = ik.solve(self.solution, self.target)
        torques = ik.gravity()
        elapsed = time.perf_counter() - started
        self.last_ik_seconds = elapsed
        self.ik_seconds_total += elapsed
        self.ik_decisions += 1
        self.write_ctrl(data, torques)

    def write_ctrl(self, data: Any, gravity: np.ndarray) -> None:
        """Command the arm to `self.solution` (held against `gravity`) and the gripper."""
        model = self._kinematic_model()
        q = self.solution[self._arm_qpos]
        ids = self._arm_actuators
        gain = model.actuator_gainprm[ids, 0]
        bias = model.actuator_biasprm[ids]
        # an affine position actuator: force = gain * ctrl + bias0 + bias1 * q + bias2 * qdot
        ctrl = (gravity[self._arm_dofs] - bias[:, 0] - bias[:, 1] * q) / gain
        low, high = model.actuator_ctrlrange[ids, 0], model.actuator_ctrlrange[ids, 1]
        data.ctrl[ids] = np.clip(ctrl, low, high)
        facts = self.facts
        data.ctrl[self._gripper_actuator] = (
            facts.gripper_closed if self.gripper_closed else facts.gripper_open
        )

    def _kinematic_model(self) -> Any:
        if self._model is None:
            self._model = self._model_source()
        return self._model

    def _inverse_kinematics(self) -> HandIK:
        if self._ik is None:
            self._ik = HandIK(self._kinematic_model(), self.facts.hand_site, self._home_q, self.home_rotation)
        return self._ik

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_model"] = None  # fetched again from _model_source
        state["_ik"] = None  # mink's objects: rebuilt at the next decision
        return state
