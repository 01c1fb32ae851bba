"""The built-in catalog entries of Gymnasium's MuJoCo tasks, as the broker's TOML.

`python -m platform_envs.adapters.gym_mujoco_catalog > services/broker/src/platform_broker/builtin/gymnasium_mujoco.toml`
writes the committed file (data: the broker does not import MuJoCo); a test checks that the
file equals this output. Each task's options are its v5 constructor's scalar keyword arguments
with their defaults (read from the signature), its registered `max_episode_steps`, and
`frame_skip` with the control rate it gives (from the model's time step), and its `world`
table (what a world-change timeline may name: `platform_contracts.world_changes`): the model's named
bodies, actuators and geoms and the observation's size with the default kwargs.
"""

from __future__ import annotations

import importlib
import inspect
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from platform_envs.adapters.catalog_toml import entry_lines, file_head
from platform_envs.adapters.gym_mujoco import TASKS, VERSION, make_env
from platform_envs.option_bounds import MAX_EPISODE_STEPS, MAX_PHYSICS_STEPS_PER_DECISION, MAX_WEIGHT

FACTORY = "platform_envs.adapters.gym_mujoco:make_env"

# Catalog id -> (task, description), in the catalog's order.
ENTRIES: dict[str, tuple[str, str]] = {
    "ant": ("Ant", "MuJoCo Ant: make a four-legged robot walk forward by torquing its 8 hip and ankle joints."),
    "halfcheetah": ("HalfCheetah", "MuJoCo HalfCheetah: make a 2D cat-like robot run forward by torquing its 6 joints."),
    "hopper": ("Hopper", "MuJoCo Hopper: make a one-legged 2D robot hop forward without falling."),
    "humanoid": ("Humanoid", "MuJoCo Humanoid: make a 3D humanoid walk forward without falling (17 joints)."),
    "humanoidstandup": ("HumanoidStandup", "MuJoCo HumanoidStandup: make a humanoid lying on the ground stand up."),
    "inverted-double-pendulum": (
        "InvertedDoublePendulum",
        "MuJoCo InvertedDoublePendulum: balance two poles stacked on a cart by pushing the cart.",
    ),
    "inverted-pendulum": ("InvertedPendulum", "MuJoCo InvertedPendulum: balance a pole on a cart by pushing the cart."),
    "pusher": ("Pusher", "MuJoCo Pusher: push an object to a goal position with a 7-joint robot arm."),
    "reacher": ("Reacher", "MuJoCo Reacher: move the tip of a two-joint arm to a random target."),
    "swimmer": ("Swimmer", "MuJoCo Swimmer: make a three-link robot swim forward through a viscous fluid."),
    "walker2d": ("Walker2d", "MuJoCo Walker2d: make a two-legged 2D robot walk forward without falling."),
}

# The constructor kwargs offered as options: name -> (type, help, minimum or None). A scalar
# kwarg of a task that is neither here nor in NOT_OFFERED stops the generator.
CONSTRUCTOR_OPTIONS: dict[str, tuple[str, str, float | None]] = {
    "forward_reward_weight": ("float", "Weight of the reward for moving forward (+x).", None),
    "ctrl_cost_weight": ("float", "Weight of the cost of large actions.", None),
    "contact_cost_weight": ("float", "Weight of the cost of large external contact forces.", None),
    "impact_cost_weight": ("float", "Weight of the cost of large external contact (impact) forces.", None),
    "uph_cost_weight": ("float", "Weight of the reward for raising the torso (upward speed).", None),
    "healthy_reward": ("float", "Reward for each step the robot is healthy (alive).", None),
    "terminate_when_unhealthy": ("bool", "End the episode (terminated) once the robot is unhealthy.", None),
    "reset_noise_scale": ("float", "Scale of the random noise on the initial positions and velocities at reset.", 0.0),
    "reward_near_weight": ("float", "Weight of the reward for the fingertip being near the object.", None),
    "reward_dist_weight": ("float", "Weight of the reward for being close to the target.", None),
    "reward_control_weight": ("float", "Weight of the cost of large actions.", None),
    "exclude_current_positions_from_observation": (
        "bool",
        "Leave the torso's x (and y) position out of the observation (false makes it longer).",
        None,
    ),
    "include_cfrc_ext_in_observation": ("bool", "Put the external contact forces (cfrc_ext) in the observation.", None),
    "include_cinert_in_observation": ("bool", "Put the bodies' inertias (cinert) in the observation.", None),
    "include_cvel_in_observation": ("bool", "Put the bodies' centre-of-mass velocities (cvel) in the observation.", None),
    "include_qfrc_actuator_in_observation": ("bool", "Put the actuator forces (qfrc_actuator) in the observation.", None),
}
# Scalar constructor kwargs not offered: frame_skip is the family's option; main_body is a body
# (index or name) of the model.
NOT_OFFERED = frozenset({"frame_skip", "main_body", "render_mode", "width", "height", "camera_id", "camera_name",
                         "visual_options", "max_geom"})

HEADER = """\
Built-in catalog entries: Gymnasium's MuJoCo tasks (the v5 ids). Same format as catalog.toml.
Generated by `python -m platform_envs.adapters.gym_mujoco_catalog`: edit that module, not this file.
Rendered headless (EGL, else OSMesa; the GPU where one exists) at 240x320 with shadows,
reflections, skybox and multisampling off. Options: frame_skip, max_episode_steps,
render_quality and each task's scalar constructor kwargs with their defaults (see
platform_envs.adapters.gym_mujoco.make_env). Not declared, so the broker refuses them in a
session's kwargs: render_size, the entry's task and the constructors' other kwargs (ranges,
xml_file: a path on the env host).
"""
FAMILY = "Gymnasium MuJoCo"

FAMILY_OPTIONS: dict[str, dict[str, Any]] = {
    "frame_skip": {"type": "int", "minimum": 1, "maximum": MAX_PHYSICS_STEPS_PER_DECISION, "help": "MuJoCo steps per decision: sets metadata.control_rate."},
    "max_episode_steps": {
        "type": "int",
        "minimum": 1,
        "maximum": MAX_EPISODE_STEPS,
        "help": "Steps after which an episode is truncated (Gymnasium's TimeLimit).",
    },
    "render_quality": {
        "type": "choice",
        "default": "fast",
        "choices": ["fast", "full"],
        "help": "Frames: fast (no shadows, reflections, skybox or multisampling) or full (the model's own look). "
        "Never changes the physics.",
    },
}


@dataclass(frozen=True)
class TaskFacts:
    """What a task's options say about it, read from Gymnasium's registry, constructor and model."""

    timestep: float  # the model's physics time step, seconds
    frame_skip: int
    max_episode_steps: int
    constructor: Mapping[str, Any]  # its scalar kwargs' defaults, in signature order
    world: Mapping[str, Any] = field(default_factory=dict)  # the `world` table (WorldFacts)


def task_facts(task: str) -> TaskFacts:
    """One task's figures (builds it once, without rendering)."""
    import gymnasium

    spec = gymnasium.spec(f"{task}-{VERSION}")
    module, name = str(spec.entry_point).split(":")
    signature = inspect.signature(getattr(importlib.import_module(module), name).__init__)
    scalars = {
        key: parameter.default
        for key, parameter in signature.parameters.items()
        if isinstance(parameter.default, (bool, int, float)) and key not in NOT_OFFERED
    }
    unknown = sorted(set(scalars) - set(CONSTRUCTOR_OPTIONS))
    if unknown:
        raise SystemExit(f"{task}: no help for its kwargs {unknown}: add them to CONSTRUCTOR_OPTIONS or NOT_OFFERED")
    from platform_envs.world_change_effects import live_facts

    env = make_env(task, render_mode=None)
    try:
        base = env.unwrapped
        timestep, frame_skip = float(base.model.opt.timestep), int(base.frame_skip)
        world = json.loads(live_facts(env).to_json())
    finally:
        env.close()
    assert spec.max_episode_steps is not None
    return TaskFacts(timestep, frame_skip, int(spec.max_episode_steps), scalars, world)


def task_options(facts: TaskFacts) -> dict[str, dict[str, Any]]:
    """One task's options: its figures over FAMILY_OPTIONS, then its constructor's."""
    step, rate = facts.timestep, 1.0 / (facts.timestep * facts.frame_skip)
    options: dict[str, dict[str, Any]] = {
        "frame_skip": {
            "default": facts.frame_skip,
            "help": f"MuJoCo steps of {step:g} s per decision: metadata.control_rate = 1 / ({step:g} s "
            f"x frame_skip) decisions per second ({rate:.4g} at the task's {facts.frame_skip}).",
        },
        "max_episode_steps": {"default": facts.max_episode_steps},
    }
    for name, default in facts.constructor.items():
        kind, help_text, minimum = CONSTRUCTOR_OPTIONS[name]
        value = float(default) if kind == "float" else default
        options[name] = {"type": kind, "default": value, "minimum": minimum, "help": help_text}
        if kind == "float":
            options[name]["maximum"] = MAX_WEIGHT
    return options


def render_toml(facts: Mapping[str, TaskFacts]) -> str:
    """The TOML text of the ENTRIES, with each task's `facts`."""
    lines = file_head(HEADER, FAMILY, FAMILY_OPTIONS)
    for env_id, (task, description) in ENTRIES.items():
        fields = {"factory": FACTORY, "kwargs": {"task": task}, "description": description,
                  "world": facts[task].world}
        lines += entry_lines(env_id, fields, task_options(facts[task]))
    return "\n".join(lines) + "\n"


def all_facts() -> dict[str, TaskFacts]:
    """The facts of every task (builds each: a few seconds in all)."""
    return {task: task_facts(task) for task in TASKS}


def main() -> None:
    missing = sorted(set(TASKS) - {task for task, _ in ENTRIES.values()})
    if missing:
        raise SystemExit(f"no entry for {missing}: add them to ENTRIES")
    print(render_toml(all_facts()), end="")


if __name__ == "__main__":
    main()
