"""ArmReachEnv: bring the hand to a target sphere (the Menagerie arms' "reach" task).

Each episode puts the target at a random point of the workspace (the hand's home +- workspace
on each axis, at least `TARGET_ABOVE_TABLE` over the table) that the hand can reach pointing
down, as the arm's inverse kinematics finds from home; the draw comes from the episode's seed.

- observation: the arm's parts (ArmEnv), then target_position and target_from_hand (target
  minus hand, m).
- reward: -distance from the hand site to the target (m), less a small action cost:
  `ACTION_COST` times the mean squared command (hand control: the hand's move in units of
  hand_step; joint control: each arm joint's commanded offset from where it is, in units of
  half its ctrl range); both terms are in info["reward_terms"].
- info["is_success"]: the hand is within `SUCCESS_DISTANCE` of the target. The episode does not
  end there: it runs to its time limit (10 s by default), so holding the hand at the target is
  what scores best.
- 25 physics steps a decision by default: 20 decisions a second on the arms' 0.002 s.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from platform_envs.robots.arm_env import ArmEnv
from platform_envs.robots.arm_scene import TARGET_BODY
from platform_envs.robots.hand_control import HandIK

SUCCESS_DISTANCE = 0.02  # m
ACTION_COST = 0.01
TARGET_ABOVE_TABLE = 0.06  # m: the target's centre over the table's top, at least
DEFAULT_SUBSTEPS = 25
DEFAULT_TIME_LIMIT = 10.0  # s
REACH_CHECK_ITERATIONS = 60
REACH_TOLERANCE = 0.005  # m: a target is reachable when the IK gets the hand this close
MAX_DRAWS = 50


class ArmReachEnv(ArmEnv):
    """Reach a target with the hand (see the module docstring); ArmEnv's arguments."""

    task: ClassVar[str] = "reach"
    scene_has_target: ClassVar[bool] = True

    def __init__(
        self,
        robot: str = "franka_emika_panda",
        *,
        substeps: int = DEFAULT_SUBSTEPS,
        time_limit: float | None = DEFAULT_TIME_LIMIT,
        **options: Any,
    ) -> None:
        super().__init__(robot, substeps=substeps, time_limit=time_limit, **options)

    def _prepare_task(self, model: Any) -> None:
        self._target_mocap = int(model.body(TARGET_BODY).mocapid[0])
        self._arm_actuators = np.array([model.actuator(name).id for name in self.facts.arm_actuators])
        home = np.array(self.layout.home.hand_position)
        self._target_low = home - self.settings.workspace
        self._target_low[2] = max(self._target_low[2], self.layout.table_top + TARGET_ABOVE_TABLE)
        self._target_high = home + self.settings.workspace
        self.target_position = home.copy()
        self._last_action_cost = 0.0
        self._reach_ik: HandIK | None = None

    # -- the target ------------------------------------------------------------------------------

    def _reset_task(self, rng: np.random.Generator) -> None:
        super()._reset_task(rng)
        self.target_position = self._draw_target(rng)
        self._last_action_cost = 0.0
        self._show_target()

    def _draw_target(self, rng: np.random.Generator) -> np.ndarray:
        """A reachable point of the target box (the last draw if none of `MAX_DRAWS` is)."""
        target = self._target_low
        for _ in range(MAX_DRAWS):
            target = rng.uniform(self._target_low, self._target_high)
            if self._reachable(target):
                break
        return np.asarray(target, dtype=np.float64)

    def _reachable(self, target: np.ndarray) -> bool:
        ik = self._ik()
        ik.solve(self._home_qpos, target, iterations=REACH_CHECK_ITERATIONS)
        return bool(np.linalg.norm(ik.hand_position() - target) < REACH_TOLERANCE)

    def _ik(self) -> HandIK:
        if self._reach_ik is None:
            model, _ = self.compiled_scene(self.facts)  # the model as built
            home = self.layout.home
            rotation = np.array(home.hand_rotation).reshape(3, 3)
            self._reach_ik = HandIK(model, self.facts.hand_site, self._home_qpos, rotation)
        return self._reach_ik

    def _show_target(self) -> None:
        self.data.mocap_pos[self._target_mocap] = self.target_position

    # -- acting and scoring ----------------------------------------------------------------------

    def _apply_action(self, action: np.ndarray) -> None:
        self._last_action_cost = self._action_cost(action)
        super()._apply_action(action)
        self._show_target()  # the sphere drawn where the target is, also after a restore

    def _action_cost(self, action: np.ndarray) -> float:
        if self.hand_controller is not None:
            move, _ = self.settings.decode(action)
            effort = move / self.settings.hand_step
        else:
            ids = self._arm_actuators
            low, high = self.model.actuator_ctrlrange[ids].T
            commanded = np.asarray(action, dtype=np.float64)[ids]
            effort = np.clip((commanded - self.data.qpos[self._arm_qpos]) / ((high - low) / 2), -1.0, 1.0)
        return ACTION_COST * float(np.mean(np.square(effort)))

    @property
    def distance(self) -> float:
        """From the hand site to the target (m)."""
        return float(np.linalg.norm(self.target_position - self.hand_position))

    def _task_observation_parts(self) -> list[tuple[str, np.ndarray]]:
        return [
            ("target_position", self.target_position.copy()),
            ("target_from_hand", self.target_position - self.hand_position),
        ]

    def _reward(self) -> tuple[float, dict[str, float]]:
        terms = {"distance": -self.distance, "action": -self._last_action_cost}
        return float(sum(terms.values())), terms

    def _terminated(self) -> bool:
        return False

    def _info(self) -> dict[str, Any]:
        return {"is_success": self.distance < SUCCESS_DISTANCE}

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["_reach_ik"] = None  # mink's objects: rebuilt on the next draw
        return state
