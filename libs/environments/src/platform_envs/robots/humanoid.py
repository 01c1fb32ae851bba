"""Humanoids that stand and walk: the Unitree H1 and G1 and the Booster T1 from MuJoCo Menagerie.

- Actions: a Box in [-1, 1] per actuator, each a joint position target around the default pose
  (the robot's standing keyframe): target = default + ACTION_SCALE * action, clipped to the
  joint's range. The G1's and T1's actuators are position servos already; the H1's torque
  motors are made position servos (kp = the motor's torque limit per radian, critically damped)
  with the motor's torque limit kept, so every robot's control runs inside MuJoCo's step.
- Observation (labelled): torso_height (m), gravity_in_torso (unit vector; (0, 0, -1) upright),
  torso_linear_velocity and torso_angular_velocity (torso frame), joint_angles (less the default
  pose), joint_velocities, last_action, and for walk the command (vx, vy in m/s, yaw rate in
  rad/s), drawn per episode from the env's seed.
- Reward: Playground's locomotion terms (robots/humanoid_rewards.py), in info["reward_terms"].
- Terminated when fallen: the torso below FALL_FRACTION of its standing height, or tilted more
  than 60 degrees. Truncated after time_limit (default 20 s).
- 50 decisions a second by default (substeps 10 on the 0.002 s physics step).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from platform_envs.robots.errors import RobotError
from platform_envs.robots.humanoid_rewards import WEIGHTS, BodyMotion, reward_terms
from platform_envs.robots.mujoco_env import MujocoRobotEnv

TASKS: tuple[str, ...] = ("stand", "walk")
CONTROL_RATE = 50.0  # decisions a second by default
ACTION_SCALE = 0.5  # radians of joint target per unit of action
FALL_FRACTION = 0.6
MAX_TILT_COS = 0.5  # cos(60 degrees)
RESET_NOISE = 0.05  # radians of noise on the joints at reset
# (vx, vy, yaw rate) ranges of walk's command
COMMAND_LOW = np.array([0.0, -0.3, -0.5])
COMMAND_HIGH = np.array([1.0, 0.3, 0.5])


class HumanoidFacts:
    """Where each humanoid's parts are: its torso body and standing keyframe."""

    TORSO: ClassVar[dict[str, str]] = {"unitree_h1": "pelvis", "unitree_g1": "pelvis", "booster_t1": "Trunk"}
    KEYFRAME: ClassVar[dict[str, str]] = {"unitree_h1": "home", "unitree_g1": "stand", "booster_t1": "home"}


_MODELS: dict[str, Any] = {}


def built_model(robot: str) -> Any:
    """The humanoid's scene compiled with position servos (cached per process)."""
    if robot not in _MODELS:
        from platform_envs.robots.menagerie import load_spec

        spec = load_spec(robot)
        for actuator in spec.actuators:
            if int(actuator.gaintype) == 0 and int(actuator.biastype) == 0:  # a motor: make it a servo
                limit = float(max(abs(actuator.ctrlrange[0]), abs(actuator.ctrlrange[1])))
                actuator.ctrlrange = spec.joint(actuator.target).range
                actuator.set_to_position(kp=limit, dampratio=1.0)
                actuator.forcelimited = 1
                actuator.forcerange = [-limit, limit]
        _MODELS[robot] = spec.compile()
    return _MODELS[robot]


class HumanoidEnv(MujocoRobotEnv):
    """A Menagerie humanoid standing or walking (module docstring).

    Args:
        robot: "unitree_h1", "unitree_g1" or "booster_t1".
        task: "stand" or "walk".
        substeps: physics steps per decision (default: 50 decisions a second).
        time_limit: seconds per episode (default 20).
        **options: the base's (render_size, camera, render_mode, render_quality, env_id).
    """

    def __init__(
        self,
        robot: str = "unitree_h1",
        *,
        task: str = "walk",
        substeps: int | None = None,
        time_limit: float | None = 20.0,
        **options: Any,
    ) -> None:
        import mujoco

        if robot not in HumanoidFacts.TORSO:
            raise RobotError(f"unknown humanoid {robot!r}; the humanoids: {', '.join(HumanoidFacts.TORSO)}")
        if task not in TASKS:
            raise RobotError(f"{robot} has no task {task!r}; its tasks: {', '.join(TASKS)}")
        model = built_model(robot)
        self._robot = robot
        self._task = task
        self._torso = model.body(HumanoidFacts.TORSO[robot]).id
        key = model.key(HumanoidFacts.KEYFRAME[robot])
        self._default_qpos = np.array(key.qpos)
        self._joint_qpos = np.array([model.jnt_qposadr[model.actuator_trnid[i, 0]] for i in range(model.nu)])
        self._joint_dofs = np.array([model.jnt_dofadr[model.actuator_trnid[i, 0]] for i in range(model.nu)])
        self._default_pose = self._default_qpos[self._joint_qpos]
        self._ctrl_low, self._ctrl_high = np.array(model.actuator_ctrlrange).T
        self._standing_height = float(self._default_qpos[2])
        self._command = np.zeros(3)
        self._action = np.zeros(model.nu)
        self._last_action = np.zeros(model.nu)
        if substeps is None:
            substeps = max(1, round(1.0 / (CONTROL_RATE * model.opt.timestep)))
        options.setdefault("camera", -1)
        super().__init__(model, robot=robot, task=task, substeps=substeps, time_limit=time_limit, **options)
        self.action_space = spaces.Box(-1.0, 1.0, (model.nu,), np.float64)
        self._tracking_camera = mujoco.MjvCamera()

    # -- hooks -----------------------------------------------------------------------------------

    def _built_model(self) -> Any:
        return built_model(self._robot)

    def _reset_task(self, rng: np.random.Generator) -> None:
        data = self.data
        data.qpos[:] = self._default_qpos
        data.qpos[self._joint_qpos] += rng.uniform(-RESET_NOISE, RESET_NOISE, self._joint_qpos.size)
        data.qvel[:] = 0.0
        data.ctrl[:] = np.clip(self._default_pose, self._ctrl_low, self._ctrl_high)
        self._action = np.zeros(self.model.nu)
        self._last_action = np.zeros(self.model.nu)
        self._command = rng.uniform(COMMAND_LOW, COMMAND_HIGH) if self._task == "walk" else np.zeros(3)

    def _apply_action(self, action: np.ndarray) -> None:
        action = np.clip(action, -1.0, 1.0)
        self._last_action = self._action
        self._action = action
        self.data.ctrl[:] = np.clip(self._default_pose + ACTION_SCALE * action, self._ctrl_low, self._ctrl_high)

    def _observation_parts(self) -> list[tuple[str, np.ndarray]]:
        linear, angular = self._torso_velocity()
        data = self.data
        parts = [
            ("torso_height", np.array([data.xpos[self._torso, 2]])),
            ("gravity_in_torso", self._gravity_in_torso()),
            ("torso_linear_velocity", linear),
            ("torso_angular_velocity", angular),
            ("joint_angles", data.qpos[self._joint_qpos] - self._default_pose),
            ("joint_velocities", np.array(data.qvel[self._joint_dofs])),
            ("last_action", np.array(self._action)),
        ]
        if self._task == "walk":
            parts.append(("command", np.array(self._command)))
        return parts

    def _reward(self) -> tuple[float, dict[str, float]]:
        linear, angular = self._torso_velocity()
        data = self.data
        motion = BodyMotion(
            height=float(data.xpos[self._torso, 2]),
            gravity_in_torso=self._gravity_in_torso(),
            linear_velocity=linear,
            angular_velocity=angular,
            joint_offsets=data.qpos[self._joint_qpos] - self._default_pose,
            joint_velocities=np.array(data.qvel[self._joint_dofs]),
            actuator_forces=np.array(data.actuator_force),
            action=self._action,
            last_action=self._last_action,
            command=self._command,
            standing_height=self._standing_height,
            fallen=self._fallen(),
        )
        terms = reward_terms(self._task, motion)
        return float(sum(terms.values())), terms

    def _terminated(self) -> bool:
        return self._fallen()

    def _info(self) -> dict[str, Any]:
        return {"command": self._command.tolist()} if self._task == "walk" else {}

    # -- what the body does ----------------------------------------------------------------------

    @property
    def command(self) -> np.ndarray:
        """walk's (vx, vy, yaw rate) for this episode; zeros for stand."""
        return np.array(self._command)

    def _fallen(self) -> bool:
        height = float(self.data.xpos[self._torso, 2])
        return height < FALL_FRACTION * self._standing_height or -self._gravity_in_torso()[2] < MAX_TILT_COS

    def _gravity_in_torso(self) -> np.ndarray:
        rotation = self.data.xmat[self._torso].reshape(3, 3)
        return np.asarray(rotation.T @ np.array([0.0, 0.0, -1.0]))

    def _torso_velocity(self) -> tuple[np.ndarray, np.ndarray]:
        import mujoco

        velocity = np.zeros(6)
        mujoco.mj_objectVelocity(self.model, self.data, mujoco.mjtObj.mjOBJ_BODY, self._torso, velocity, 1)
        return velocity[3:], velocity[:3]

    def render(self) -> np.ndarray | None:
        """A frame from a camera that follows the torso (the free camera when camera is -1)."""
        if self.render_mode is None or self._camera != -1:
            return super().render()
        import mujoco

        if self._renderer is None:
            super().render()  # makes the renderer
        camera = self._tracking_camera
        camera.type = mujoco.mjtCamera.mjCAMERA_FREE
        camera.lookat[:] = self.data.xpos[self._torso]
        camera.distance = 3.0 * self._standing_height + 1.0
        camera.azimuth = 135.0
        camera.elevation = -15.0
        self._renderer.update_scene(self.data, camera=camera)
        frame: np.ndarray = self._renderer.render()
        return frame

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state.pop("_tracking_camera", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        import mujoco

        super().__setstate__(state)
        self._tracking_camera = mujoco.MjvCamera()


__all__ = ["TASKS", "WEIGHTS", "HumanoidEnv"]
