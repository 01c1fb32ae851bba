"""The built-in catalog entries of the DeepMind Control Suite, as the broker's TOML.

`python -m platform_sdk.adapters.dmc_catalog > services/broker/src/platform_broker/builtin/dm_control.toml`
writes the committed file (data: the broker does not import dm_control); a test checks that
the file lists exactly `dm_control.suite.ALL_TASKS` and equals this output.
"""

from __future__ import annotations

import json

from platform_sdk.adapters.dmc_config import catalog_id

FACTORY = "platform_sdk.adapters.dmc:make_env"

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
# Built-in catalog entries: every task of the DeepMind Control Suite (dm_control.suite.ALL_TASKS,
# dm-control 1.0.50). Same format as catalog.toml. Generated by
# `python -m platform_sdk.adapters.dmc_catalog`: edit that module, not this file.
# Dict observations keep dm_control's names; get_observation_labels() names the flat parts.
# Other kwargs: substeps (physics steps per decision), time_limit (seconds), render_size,
# camera_id, render_quality ("fast" or "full") (see platform_sdk.adapters.dmc.make_env).
"""


def render_toml(tasks: list[tuple[str, str]] | None = None) -> str:
    """The TOML text of the entries for `tasks` (default: the descriptions' tasks, in order)."""
    lines = [HEADER.rstrip("\n")]
    for domain, task in tasks if tasks is not None else list(DESCRIPTIONS):
        lines += [
            "",
            f"[envs.{catalog_id(domain, task)}]",
            f'factory = "{FACTORY}"',
            f"kwargs = {{ domain = {json.dumps(domain)}, task = {json.dumps(task)} }}",
            f"description = {json.dumps('DeepMind Control ' + domain + ' ' + task + ': ' + DESCRIPTIONS[domain, task])}",
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    from dm_control import suite

    missing = sorted(set(suite.ALL_TASKS) - set(DESCRIPTIONS))
    if missing:
        raise SystemExit(f"no description for {missing}: add them to DESCRIPTIONS")
    print(render_toml(list(suite.ALL_TASKS)), end="")


if __name__ == "__main__":
    main()
