"""The humanoids' reward terms, after MuJoCo Playground's locomotion (joystick) tasks.

Taken from Playground (`mujoco_playground/_src/locomotion/*/joystick.py`), with its shapes:
tracking_lin_vel (exp(-|v_xy - command_xy|^2 / sigma)), tracking_ang_vel (the same for the yaw
rate), lin_vel_z (-v_z^2), ang_vel_xy (-|w_xy|^2), orientation (-|gravity_xy|^2 in the torso's
frame: 0 upright), action_rate (-|a_t - a_{t-1}|^2), energy (-sum |qvel * actuator force|),
pose (-|q - q_default|^2) and termination (-1 on a fall). Added here: alive (1 while standing)
and, for stand, height (exp(-(h - h_standing)^2 / sigma)). The weights are per task below; the
reward is their weighted sum (not multiplied by the control period as Playground does).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TRACKING_SIGMA = 0.25
HEIGHT_SIGMA = 0.01

# Weights of each term per task; terms not listed weigh 0 and are not computed.
WEIGHTS: dict[str, dict[str, float]] = {
    "stand": {
        "alive": 1.0,
        "height": 1.0,
        "orientation": -2.0,
        "tracking_lin_vel": 0.5,
        "tracking_ang_vel": 0.25,
        "ang_vel_xy": -0.05,
        "action_rate": -0.01,
        "energy": -1e-4,
        "pose": -0.1,
        "termination": -1.0,
    },
    "walk": {
        "alive": 0.5,
        "tracking_lin_vel": 1.5,
        "tracking_ang_vel": 0.8,
        "lin_vel_z": -0.5,
        "ang_vel_xy": -0.05,
        "orientation": -2.0,
        "action_rate": -0.01,
        "energy": -1e-4,
        "pose": -0.05,
        "termination": -1.0,
    },
}


@dataclass(frozen=True)
class BodyMotion:
    """What the reward terms read of one decision's end."""

    height: float
    gravity_in_torso: np.ndarray  # unit vector, (0, 0, -1) when upright
    linear_velocity: np.ndarray  # torso frame, m/s
    angular_velocity: np.ndarray  # torso frame, rad/s
    joint_offsets: np.ndarray  # joint angles less the default pose
    joint_velocities: np.ndarray
    actuator_forces: np.ndarray
    action: np.ndarray
    last_action: np.ndarray
    command: np.ndarray  # (vx, vy, yaw rate)
    standing_height: float
    fallen: bool


def reward_terms(task: str, motion: BodyMotion) -> dict[str, float]:
    """Each weighted term of `task` for `motion` (already multiplied by its weight)."""
    weights = WEIGHTS[task]
    raw = {
        "alive": 0.0 if motion.fallen else 1.0,
        "height": float(np.exp(-((motion.height - motion.standing_height) ** 2) / HEIGHT_SIGMA)),
        "orientation": float(np.sum(motion.gravity_in_torso[:2] ** 2)),
        "tracking_lin_vel": float(
            np.exp(-np.sum((motion.linear_velocity[:2] - motion.command[:2]) ** 2) / TRACKING_SIGMA)
        ),
        "tracking_ang_vel": float(
            np.exp(-((motion.angular_velocity[2] - motion.command[2]) ** 2) / TRACKING_SIGMA)
        ),
        "lin_vel_z": float(motion.linear_velocity[2] ** 2),
        "ang_vel_xy": float(np.sum(motion.angular_velocity[:2] ** 2)),
        "action_rate": float(np.sum((motion.action - motion.last_action) ** 2)),
        "energy": float(np.sum(np.abs(motion.joint_velocities * motion.actuator_forces))),
        "pose": float(np.sum(motion.joint_offsets**2)),
        "termination": 1.0 if motion.fallen else 0.0,
    }
    return {name: weight * raw[name] for name, weight in weights.items()}
