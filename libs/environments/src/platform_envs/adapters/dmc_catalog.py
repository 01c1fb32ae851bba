"""The built-in catalog entries of the DeepMind Control Suite, as the broker's TOML.

`python -m platform_envs.adapters.dmc_catalog > services/broker/src/platform_broker/builtin/dm_control.toml`
writes the committed file (data: the broker does not import dm_control); a test checks that
the file lists exactly `dm_control.suite.ALL_TASKS` and equals this output. Each entry's
options (`make_env`'s kwargs) carry the task's own figures, read from the loaded task: its
physics time step and substeps (so the control rate), its time limit and its cameras; its
`world` table (what a world-change timeline may name: `platform_contracts.world_changes`) holds the
model's named bodies, actuators and geoms and the flat observation's size.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from platform_envs.adapters.catalog_toml import entry_lines, file_head
from platform_envs.adapters.dmc_config import catalog_id
from platform_envs.option_bounds import MAX_EPISODE_SECONDS, MAX_PHYSICS_STEPS_PER_DECISION, MAX_SEED

FACTORY = "platform_envs.adapters.dmc:make_env"

# One line per task of dm_control.suite.ALL_TASKS (dm-control 1.0.50), in its order.
DESCRIPTIONS: dict[tuple[str, str], str] = {
    (
        "acrobot",
        "swingup",
    ): "Swing up and balance a two-link pendulum actuated at its elbow only (shaped reward).",
    (
        "acrobot",
        "swingup_sparse",
    ): "Swing up and balance a two-link pendulum actuated at its elbow only (sparse reward).",
    ("ball_in_cup", "catch"): "Swing a ball on a string up and into a cup held by a planar arm.",
    ("cartpole", "balance"): "Keep a pole upright on a cart, starting near upright (shaped reward).",
    ("cartpole", "balance_sparse"): "Keep a pole upright on a cart, starting near upright (sparse reward).",
    ("cartpole", "swingup"): "Swing a pole up from hanging down and balance it on a cart (shaped reward).",
    (
        "cartpole",
        "swingup_sparse",
    ): "Swing a pole up from hanging down and balance it on a cart (sparse reward).",
    ("cartpole", "two_poles"): "Swing up and balance two poles stacked on a cart.",
    ("cartpole", "three_poles"): "Swing up and balance three poles stacked on a cart.",
    ("cheetah", "run"): "Make a planar cheetah run forward as fast as it can (6 joints).",
    ("dog", "stand"): "Make a 38-actuator Pharaoh dog stand up and stay upright.",
    ("dog", "walk"): "Make a 38-actuator Pharaoh dog walk forward at a target speed.",
    ("dog", "trot"): "Make a 38-actuator Pharaoh dog trot forward at a target speed.",
    ("dog", "run"): "Make a 38-actuator Pharaoh dog run forward at a target speed.",
    ("dog", "fetch"): "Make a 38-actuator Pharaoh dog fetch a ball and bring it back to a target.",
    ("finger", "spin"): "Spin a free-turning body with a planar two-link finger.",
    ("finger", "turn_easy"): "Turn a body with a planar finger until its tip reaches a large target.",
    ("finger", "turn_hard"): "Turn a body with a planar finger until its tip reaches a small target.",
    ("fish", "upright"): "Orient a swimming fish upright in a fluid.",
    ("fish", "swim"): "Swim a fish to a target in a 3D fluid.",
    ("hopper", "stand"): "Make a planar one-legged hopper stand upright.",
    ("hopper", "hop"): "Make a planar one-legged hopper hop forward.",
    ("humanoid", "stand"): "Make a 21-joint humanoid stand up and stay upright.",
    ("humanoid", "walk"): "Make a 21-joint humanoid walk forward at 1 m/s.",
    ("humanoid", "run"): "Make a 21-joint humanoid run forward at 10 m/s.",
    ("humanoid", "run_pure_state"): "Humanoid run with the raw state (qpos, qvel) as its observation.",
    ("humanoid_CMU", "stand"): "Make the 56-joint CMU motion-capture humanoid stand upright.",
    ("humanoid_CMU", "walk"): "Make the 56-joint CMU motion-capture humanoid walk forward.",
    ("humanoid_CMU", "run"): "Make the 56-joint CMU motion-capture humanoid run forward.",
    (
        "lqr",
        "lqr_2_1",
    ): "Drive a linear chain of 2 masses on springs to rest with 1 actuator (quadratic cost).",
    (
        "lqr",
        "lqr_6_2",
    ): "Drive a linear chain of 6 masses on springs to rest with 2 actuators (quadratic cost).",
    ("manipulator", "bring_ball"): "Bring a ball to a target with a planar arm and gripper.",
    ("manipulator", "bring_peg"): "Bring a peg to a target pose with a planar arm and gripper.",
    ("manipulator", "insert_ball"): "Put a ball into a basket with a planar arm and gripper.",
    ("manipulator", "insert_peg"): "Insert a peg into a slot with a planar arm and gripper.",
    ("pendulum", "swingup"): "Swing up and balance a torque-limited pendulum (sparse reward).",
    ("point_mass", "easy"): "Move a point mass to a target in a plane with two actuators.",
    ("point_mass", "hard"): "Move a point mass to a target with randomised actuator gains.",
    ("quadruped", "walk"): "Make a 12-joint quadruped walk forward.",
    ("quadruped", "run"): "Make a 12-joint quadruped run forward.",
    ("quadruped", "escape"): "Make a quadruped escape a bowl of rough random terrain.",
    ("quadruped", "fetch"): "Make a quadruped fetch a ball and bring it to the centre of the arena.",
    ("reacher", "easy"): "Reach a large random target with the tip of a planar two-link arm.",
    ("reacher", "hard"): "Reach a small random target with the tip of a planar two-link arm.",
    ("stacker", "stack_2"): "Stack 2 boxes in a target spot with a planar arm and gripper.",
    ("stacker", "stack_4"): "Stack 4 boxes in a target spot with a planar arm and gripper.",
    ("swimmer", "swimmer6"): "Swim a 6-link planar snake to a target in a viscous fluid.",
    ("swimmer", "swimmer15"): "Swim a 15-link planar snake to a target in a viscous fluid.",
    ("walker", "stand"): "Make a planar biped (walker) stand upright.",
    ("walker", "walk"): "Make a planar biped (walker) walk forward at 1 m/s.",
    ("walker", "run"): "Make a planar biped (walker) run forward at 8 m/s.",
}

HEADER = """\
Built-in catalog entries: every task of the DeepMind Control Suite (dm_control.suite.ALL_TASKS,
dm-control 1.0.50). Same format as catalog.toml. Generated by
`python -m platform_envs.adapters.dmc_catalog`: edit that module, not this file.
Dict observations keep dm_control's names; get_observation_labels() names the flat parts.
Options: make_env's kwargs (see platform_envs.adapters.dmc.make_env), each task's own figures
as defaults. Not declared, so the broker refuses them in a session's kwargs: render_size,
other task kwargs, and the entry's own domain and task.
"""
FAMILY = "DeepMind Control"

# The options of every task; each entry adds its own figures (defaults, ranges, cameras).
FAMILY_OPTIONS: dict[str, dict[str, Any]] = {
    "substeps": {"type": "int", "minimum": 1, "maximum": MAX_PHYSICS_STEPS_PER_DECISION, "help": "Physics steps per decision: sets metadata.control_rate."},
    "time_limit": {"type": "float", "maximum": MAX_EPISODE_SECONDS, "help": "Episode length in seconds, after which it is truncated."},
    "render_quality": {
        "type": "choice",
        "default": "fast",
        "choices": ["fast", "full"],
        "help": "Frames: fast (no shadows, reflections or multisampling) or full (the model's own look).",
    },
    "random": {
        "type": "int",
        "minimum": 0,
        "maximum": MAX_SEED,
        "help": "Seed of the task's draws at construction (lqr's system too), which then drives "
        "unseeded resets; null: 0, with unseeded resets seeded from the OS.",
    },
}


@dataclass(frozen=True)
class TaskFacts:
    """What a task's options say about it, read from the loaded task."""

    physics_timestep: float  # seconds
    substeps: int  # the task's own physics steps per decision
    time_limit: float  # seconds; inf for none
    cameras: tuple[str, ...]  # the model's camera names, by index
    world: Mapping[str, Any] = field(default_factory=dict)  # the `world` table (WorldFacts)

    @property
    def control_timestep(self) -> float:
        return round(self.physics_timestep * self.substeps, 9)


def task_facts(domain: str, task: str) -> TaskFacts:
    """The figures of one suite task (loads it with dm_control)."""
    import numpy as np
    from dm_control import suite

    from platform_envs.world_change_effects import mujoco_facts

    env = suite.load(domain, task, task_kwargs={"random": 0})
    model = env.physics.model
    timestep = float(model.opt.timestep)
    control = float(env.control_timestep())
    cameras = tuple(model.id2name(i, "camera") or str(i) for i in range(model.ncam))
    size = sum(int(np.prod(spec.shape)) for spec in env.observation_spec().values())
    world = json.loads(mujoco_facts(model.ptr, size).to_json())
    facts = TaskFacts(timestep, round(control / timestep), float(env._step_limit) * control, cameras, world)
    env.close()
    return facts


def task_options(facts: TaskFacts) -> dict[str, dict[str, Any]]:
    """One task's own option keys over FAMILY_OPTIONS."""
    step, rate = facts.physics_timestep, 1.0 / facts.control_timestep
    limit = facts.time_limit if facts.time_limit != float("inf") else None
    names = ", ".join(f"{i} {name!r}" for i, name in enumerate(facts.cameras))
    return {
        "substeps": {
            "default": facts.substeps,
            "help": f"Physics steps of {step:g} s per decision: metadata.control_rate = 1 / ({step:g} s "
            f"x substeps) decisions per second ({rate:.4g} at the task's {facts.substeps}).",
        },
        "time_limit": {
            "default": limit,
            "minimum": facts.control_timestep,
            "help": "Episode length in seconds (at least one decision), after which it is truncated"
            + (f"; the task's own is {limit:g} s." if limit is not None else "; null: none, as the task has."),
        },
        "camera_id": {
            "type": "choice",
            "default": 0,
            "choices": [-1, *range(len(facts.cameras)), *facts.cameras],
            "help": f"The camera frames are taken from, by index or name ({names}); -1: the free camera.",
        },
    }


def render_toml(tasks: list[tuple[str, str]], facts: Mapping[tuple[str, str], TaskFacts]) -> str:
    """The TOML text of the entries for `tasks`, with each task's `facts`."""
    lines = file_head(HEADER, FAMILY, FAMILY_OPTIONS)
    for domain, task in tasks:
        fields = {
            "factory": FACTORY,
            "kwargs": {"domain": domain, "task": task},
            "description": f"DeepMind Control {domain} {task}: {DESCRIPTIONS[domain, task]}",
            "world": facts[domain, task].world,
        }
        lines += entry_lines(catalog_id(domain, task), fields, task_options(facts[domain, task]))
    return "\n".join(lines) + "\n"


def suite_facts() -> tuple[list[tuple[str, str]], dict[tuple[str, str], TaskFacts]]:
    """Every task of the suite, in its order, and their facts (loads each task: seconds)."""
    from dm_control import suite

    from platform_envs.adapters import dmc  # noqa: F401 - sets MUJOCO_GL before dm_control is imported

    tasks = list(suite.ALL_TASKS)
    return tasks, {key: task_facts(*key) for key in tasks}


def main() -> None:
    tasks, facts = suite_facts()
    missing = sorted(set(tasks) - set(DESCRIPTIONS))
    if missing:
        raise SystemExit(f"no description for {missing}: add them to DESCRIPTIONS")
    print(render_toml(tasks, facts), end="")


if __name__ == "__main__":
    main()
