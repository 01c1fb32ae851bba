"""What the arm environments need to know about each Menagerie arm (ArmFacts).

Menagerie's models carry no common vocabulary for "the hand", "the arm's joints" or "the
gripper", so each arm's names are written down here once: the point between the fingertips
that hand control moves (a site, added through MjSpec where the model has none), the arm's
joints and their position actuators (in chain order), the gripper's actuator with its open and
closed commands, and the joints whose positions say how open the gripper is. The home pose is
the model's keyframe "home".

Importing this module imports no MuJoCo.
"""

from __future__ import annotations

import dataclasses

from platform_envs.robots.errors import RobotError

HOME_KEY = "home"


@dataclasses.dataclass(frozen=True)
class HandSite:
    """A site to add to a model that has none at its fingertips: `name` on `body` at `pos` (m)."""

    name: str
    body: str
    pos: tuple[float, float, float]


@dataclasses.dataclass(frozen=True)
class ArmFacts:
    """One Menagerie arm, as the arm environments use it.

    Attributes:
        robot: the Menagerie name (`mujoco_menagerie.get(robot)`).
        entry: the Menagerie entry point to load (a scene with a floor and a light).
        display_name: how people call it.
        base_body: the arm's root body (it stands on the scene's stand).
        hand_site: the site hand control moves and `hand_position` reports: the point between
            the fingertips (or the flange of an arm without a hand).
        add_hand_site: where to add `hand_site` when the model has no site there; None when
            the model has it.
        arm_joints: the arm's hinge joints, base to wrist.
        arm_actuators: their position actuators, in the same order.
        gripper_actuator: the gripper's actuator; None for an arm without a hand.
        gripper_open, gripper_closed: its ctrl value for a fully open and a closed grip.
        gripper_joints: the joints whose positions measure how open the gripper is.
        gripper_joint_open, gripper_joint_closed: their positions when open and when closed.
        finger_bodies: the bodies that touch what the gripper holds.
    """

    robot: str
    entry: str
    display_name: str
    base_body: str
    hand_site: str
    add_hand_site: HandSite | None
    arm_joints: tuple[str, ...]
    arm_actuators: tuple[str, ...]
    gripper_actuator: str | None
    gripper_open: float = 0.0
    gripper_closed: float = 0.0
    gripper_joints: tuple[str, ...] = ()
    gripper_joint_open: float = 0.0
    gripper_joint_closed: float = 0.0
    finger_bodies: tuple[str, ...] = ()

    @property
    def has_hand(self) -> bool:
        """Whether the arm ends in a gripper (hand control and pick and place need one)."""
        return self.gripper_actuator is not None


PANDA = ArmFacts(
    robot="franka_emika_panda",
    entry="scene",
    display_name="Franka Emika Panda",
    base_body="link0",
    hand_site="hand_tip",
    # the pads' centre is 0.103 m along the hand's z axis, open or closed (Franka's TCP is 0.1034)
    add_hand_site=HandSite("hand_tip", "hand", (0.0, 0.0, 0.1034)),
    arm_joints=tuple(f"joint{i}" for i in range(1, 8)),
    arm_actuators=tuple(f"actuator{i}" for i in range(1, 8)),
    gripper_actuator="actuator8",
    gripper_open=255.0,  # Menagerie maps the fingers' 0..0.04 m onto ctrl 0..255
    gripper_closed=0.0,
    gripper_joints=("finger_joint1", "finger_joint2"),
    gripper_joint_open=0.04,
    gripper_joint_closed=0.0,
    finger_bodies=("left_finger", "right_finger"),
)

PANDA_NOHAND = ArmFacts(
    robot="franka_emika_panda",
    entry="panda_nohand",
    display_name="Franka Emika Panda without its hand",
    base_body="link0",
    hand_site="attachment_site",  # the flange, where a hand would be mounted
    add_hand_site=None,
    arm_joints=PANDA.arm_joints,
    arm_actuators=PANDA.arm_actuators,
    gripper_actuator=None,
)

XARM7 = ArmFacts(
    robot="ufactory_xarm7",
    entry="scene",
    display_name="UFactory xArm7",
    base_body="link_base",
    hand_site="hand_tip",
    # between the pads: 0.142 m open, 0.155 m closed (the model's link_tcp, 0.172 m, is the
    # tool point beyond the fingertips)
    add_hand_site=HandSite("hand_tip", "xarm_gripper_base_link", (0.0, 0.0, 0.15)),
    arm_joints=tuple(f"joint{i}" for i in range(1, 8)),
    arm_actuators=tuple(f"act{i}" for i in range(1, 8)),
    gripper_actuator="gripper",
    gripper_open=0.0,  # the driver joints' 0..0.85 rad is ctrl 0..255
    gripper_closed=255.0,
    gripper_joints=("left_driver_joint", "right_driver_joint"),
    gripper_joint_open=0.0,
    gripper_joint_closed=0.85,
    finger_bodies=("left_finger", "right_finger"),
)

ARMS: dict[str, ArmFacts] = {PANDA.robot: PANDA, XARM7.robot: XARM7}
# other entry points of the same robots, by (robot, entry)
VARIANTS: dict[tuple[str, str], ArmFacts] = {
    (facts.robot, facts.entry): facts for facts in (PANDA, PANDA_NOHAND, XARM7)
}


def arm_facts(robot: str, entry: str | None = None) -> ArmFacts:
    """The facts of `robot` (a Menagerie name), loaded from `entry` (None: its scene).

    Raises:
        RobotError: `robot` is not an arm these environments know, or `entry` not one of its
            known entry points.
    """
    if robot not in ARMS:
        raise RobotError(f"robot {robot!r} is not an arm; the arms are {', '.join(sorted(ARMS))}")
    if entry is None:
        return ARMS[robot]
    facts = VARIANTS.get((robot, entry))
    if facts is None:
        entries = sorted(e for r, e in VARIANTS if r == robot)
        raise RobotError(f"entry {entry!r} of {robot} is not supported; use one of {', '.join(entries)}")
    return facts
