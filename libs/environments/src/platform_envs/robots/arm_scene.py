"""The arms' scene: a Menagerie arm on a stand beside a table, with a target, cameras and lights.

`arm_spec(facts)` returns the scene as an MjSpec before it is compiled, so a task can add its
own things (pick and place adds a block, bins and a ball) and compile once; `ArmLayout` says
where the table and the hand's home are. Every coordinate stays Menagerie's: the arm's base
is where the model puts it, and the floor moves down instead, with a stand under the base.

The table's top lies just under the lowest point hand control may reach with the default
workspace (`DEFAULT_WORKSPACE` below the hand's home, less the fingertips' length), so the
hand can go down to the table but not through it.

The home pose is the model's keyframe "home", read here into `ArmHome` (joint and actuator
values by name); the keyframes are then removed from the spec, because a task that adds a
free body would make them the wrong length.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np

from platform_envs.robots.menagerie import load_spec
from platform_envs.robots.arms import HOME_KEY, ArmFacts
from platform_envs.robots.errors import RobotError

DEFAULT_WORKSPACE = 0.3  # m from the hand's home along each axis (HandSettings' default)
FINGERTIP_CLEARANCE = 0.015  # m the fingertips reach below the hand site
TABLE_HEIGHT = 0.75  # m from the floor to the table's top
TABLE_THICKNESS = 0.04
TABLE_MARGIN = 0.12  # m of table beyond the workspace on each side
BASE_CLEARANCE = 0.2  # m from the arm's base axis to the table's near edge, at least
STAND_HALF_WIDTH = 0.1
TARGET_RADIUS = 0.02
TARGET_BODY = "target"
DEFAULT_CAMERA = "overview"
CAMERAS = ("overview", "front", "side", "top")
_LEG_HALF_WIDTH = 0.025


@dataclasses.dataclass(frozen=True)
class ArmHome:
    """The arm's home pose (its keyframe "home") and where its hand site is then.

    Attributes:
        qpos: each joint's home position, by joint name (the arm's and the gripper's).
        ctrl: each actuator's home command, by actuator name.
        hand_position: the hand site's world position at home (m).
        hand_rotation: the hand site's world rotation matrix at home (3x3, row-major).
    """

    qpos: dict[str, float]
    ctrl: dict[str, float]
    hand_position: tuple[float, float, float]
    hand_rotation: tuple[float, ...]


@dataclasses.dataclass(frozen=True)
class ArmLayout:
    """Where things are in the arm's scene (world frame, metres).

    Attributes:
        facts: the arm.
        home: its home pose.
        table_top: the table top's height.
        table_center: the table top's centre (x, y).
        table_half_size: the table top's half extents (x, y).
        floor: the floor's height.
        target_body: the mocap body of the target sphere, or None when the scene has none.
        cameras: the scene's cameras, the default first.
    """

    facts: ArmFacts
    home: ArmHome
    table_top: float
    table_center: tuple[float, float]
    table_half_size: tuple[float, float]
    floor: float
    target_body: str | None
    cameras: tuple[str, ...] = CAMERAS


def arm_spec(facts: ArmFacts, *, target: bool = True) -> tuple[Any, ArmLayout]:
    """The arm's scene as an uncompiled `mujoco.MjSpec`, and its layout.

    Args:
        facts: the arm.
        target: add the target sphere (a mocap body that touches nothing) at the hand's home.

    Raises:
        RobotError: the model lacks a body, joint or actuator that `facts` names, or its
            keyframe "home".
    """
    spec = robot_spec(facts)
    home = arm_home(facts)
    layout = _layout(facts, home, target)
    _remove_keyframes(spec)
    _place_floor(spec, layout)
    _add_stand(spec, layout)
    _add_table(spec, layout)
    if target:
        _add_target(spec, home)
    _add_cameras(spec, layout)
    _add_lights(spec, layout)
    return spec, layout


def robot_spec(facts: ArmFacts) -> Any:
    """The Menagerie model of `facts.robot` with its hand site added where it lacks one."""
    spec = load_spec(facts.robot, facts.entry)
    _check_names(spec, facts)
    if facts.add_hand_site is not None and spec.site(facts.add_hand_site.name) is None:
        body = spec.body(facts.add_hand_site.body)
        if body is None:
            raise RobotError(
                f"{facts.robot} has no body {facts.add_hand_site.body!r} to put its hand site on"
            )
        site = body.add_site()
        site.name = facts.add_hand_site.name
        site.pos = list(facts.add_hand_site.pos)
        site.size = [0.005, 0.005, 0.005]
        site.rgba = [0.2, 0.9, 0.2, 0.0]  # invisible: the target sphere shows where it should go
        site.group = 4
    if spec.site(facts.hand_site) is None:
        raise RobotError(f"{facts.robot} ({facts.entry}) has no site {facts.hand_site!r}")
    return spec


@functools.cache
def arm_home(facts: ArmFacts) -> ArmHome:
    """`facts`' home pose and the hand site's pose there (compiles the bare robot once per process)."""
    import mujoco

    spec = robot_spec(facts)
    key = spec.key(HOME_KEY)
    if key is None:
        raise RobotError(f"{facts.robot} ({facts.entry}) has no keyframe {HOME_KEY!r} to start from")
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key(HOME_KEY).id)
    mujoco.mj_kinematics(model, data)
    one_dof = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
    qpos = {}
    for joint_id in range(model.njnt):
        if int(model.jnt_type[joint_id]) in one_dof:
            qpos[model.joint(joint_id).name] = float(data.qpos[model.jnt_qposadr[joint_id]])
    ctrl = {model.actuator(i).name: float(data.ctrl[i]) for i in range(model.nu)}
    site = data.site(facts.hand_site)
    return ArmHome(
        qpos=qpos,
        ctrl=ctrl,
        hand_position=(float(site.xpos[0]), float(site.xpos[1]), float(site.xpos[2])),
        hand_rotation=tuple(float(v) for v in site.xmat),
    )


def home_qpos(model: Any, home: ArmHome) -> np.ndarray:
    """`model`'s qpos0 with the arm's joints at `home` (the scene's other bodies as built)."""
    qpos = np.array(model.qpos0, dtype=np.float64)
    for name, value in home.qpos.items():
        qpos[model.joint(name).qposadr[0]] = value
    return qpos


def home_ctrl(model: Any, home: ArmHome) -> np.ndarray:
    """`model`'s controls at the arm's home (0 for actuators the arm does not have)."""
    ctrl = np.zeros(model.nu)
    for name, value in home.ctrl.items():
        ctrl[model.actuator(name).id] = value
    return ctrl


def _check_names(spec: Any, facts: ArmFacts) -> None:
    wanted = [("body", facts.base_body)]
    wanted += [("joint", name) for name in facts.arm_joints + facts.gripper_joints]
    wanted += [("actuator", name) for name in facts.arm_actuators]
    wanted += [("body", name) for name in facts.finger_bodies]
    if facts.gripper_actuator is not None:
        wanted.append(("actuator", facts.gripper_actuator))
    for kind, name in wanted:
        if getattr(spec, kind)(name) is None:
            raise RobotError(f"{facts.robot} ({facts.entry}) has no {kind} {name!r}")


def _layout(facts: ArmFacts, home: ArmHome, target: bool) -> ArmLayout:
    hand_x, hand_y, hand_z = home.hand_position
    table_top = hand_z - DEFAULT_WORKSPACE - FINGERTIP_CLEARANCE
    near = max(hand_x - DEFAULT_WORKSPACE - TABLE_MARGIN, BASE_CLEARANCE)
    far = hand_x + DEFAULT_WORKSPACE + TABLE_MARGIN
    half_y = DEFAULT_WORKSPACE + TABLE_MARGIN
    return ArmLayout(
        facts=facts,
        home=home,
        table_top=table_top,
        table_center=((near + far) / 2, hand_y),
        table_half_size=((far - near) / 2, half_y),
        floor=table_top - TABLE_HEIGHT,
        target_body=TARGET_BODY if target else None,
    )


def _remove_keyframes(spec: Any) -> None:
    for key in list(spec.keys):
        spec.delete(key)


def _place_floor(spec: Any, layout: ArmLayout) -> None:
    import mujoco

    floor = spec.geom("floor")
    if floor is None:  # a robot-only entry point: give it a floor
        floor = spec.worldbody.add_geom()
        floor.name = "floor"
        floor.type = mujoco.mjtGeom.mjGEOM_PLANE
        floor.size = [0.0, 0.0, 0.05]
        floor.rgba = [0.25, 0.3, 0.35, 1.0]
    floor.pos = [0.0, 0.0, layout.floor]


def _add_stand(spec: Any, layout: ArmLayout) -> None:
    import mujoco

    stand = spec.worldbody.add_geom()
    stand.name = "stand"
    stand.type = mujoco.mjtGeom.mjGEOM_BOX
    stand.size = [STAND_HALF_WIDTH, STAND_HALF_WIDTH, -layout.floor / 2]
    stand.pos = [0.0, 0.0, layout.floor / 2]
    stand.material = _matte(spec, "stand", [0.3, 0.3, 0.32, 1.0])


def _add_table(spec: Any, layout: ArmLayout) -> None:
    import mujoco

    (cx, cy), (hx, hy) = layout.table_center, layout.table_half_size
    top = spec.worldbody.add_geom()
    top.name = "table"
    top.type = mujoco.mjtGeom.mjGEOM_BOX
    top.size = [hx, hy, TABLE_THICKNESS / 2]
    top.pos = [cx, cy, layout.table_top - TABLE_THICKNESS / 2]
    top.material = _matte(spec, "table_top", [0.5, 0.38, 0.27, 1.0])
    top.friction = [1.0, 0.005, 0.0001]
    leg_height = TABLE_HEIGHT - TABLE_THICKNESS
    for sx in (-1, 1):
        for sy in (-1, 1):
            leg = spec.worldbody.add_geom()
            leg.type = mujoco.mjtGeom.mjGEOM_BOX
            leg.size = [_LEG_HALF_WIDTH, _LEG_HALF_WIDTH, leg_height / 2]
            leg.pos = [
                cx + sx * (hx - 2 * _LEG_HALF_WIDTH),
                cy + sy * (hy - 2 * _LEG_HALF_WIDTH),
                layout.floor + leg_height / 2,
            ]
            leg.material = _matte(spec, "table_leg", [0.42, 0.32, 0.23, 1.0])
            leg.contype = 0  # only the top is ever touched
            leg.conaffinity = 0


def _add_target(spec: Any, home: ArmHome) -> None:
    import mujoco

    body = spec.worldbody.add_body()
    body.name = TARGET_BODY
    body.mocap = True
    body.pos = list(home.hand_position)
    geom = body.add_geom()
    geom.name = TARGET_BODY
    geom.type = mujoco.mjtGeom.mjGEOM_SPHERE
    geom.size = [TARGET_RADIUS, 0.0, 0.0]
    geom.rgba = [0.9, 0.15, 0.15, 0.6]
    geom.contype = 0
    geom.conaffinity = 0
    geom.mass = 0.0


def _add_cameras(spec: Any, layout: ArmLayout) -> None:
    cx, cy = layout.table_center
    hand_z = layout.home.hand_position[2]
    middle = np.array([cx - 0.15, cy, hand_z - 0.05])
    views = {
        # name: (camera position, point looked at); 45 degree vertical field of view
        "overview": (middle + [1.1, -0.95, 0.55], middle),
        "front": (middle + [1.6, 0.0, 0.25], middle),
        "side": (middle + [0.0, -1.6, 0.15], middle),
        "top": (np.array([cx - 0.1, cy, layout.table_top + 1.5]), np.array([cx - 0.1, cy, layout.table_top])),
    }
    for name in CAMERAS:
        position, look_at = views[name]
        camera = spec.worldbody.add_camera()
        camera.name = name
        camera.pos = [float(v) for v in position]
        camera.quat = [float(v) for v in _look_at_quat(position, look_at)]
        camera.fovy = 45.0


def _add_lights(spec: Any, layout: ArmLayout) -> None:
    (cx, cy) = layout.table_center
    key = spec.worldbody.add_light()
    key.name = "key"
    key.pos = [cx + 0.6, cy - 0.6, layout.table_top + 2.0]
    key.dir = [float(v) for v in _unit(np.array([-0.3, 0.3, -1.0]))]
    key.diffuse = [0.3, 0.3, 0.3]
    key.castshadow = True
    fill = spec.worldbody.add_light()
    fill.name = "fill"
    fill.pos = [cx - 1.0, cy + 1.0, layout.table_top + 1.5]
    fill.dir = [float(v) for v in _unit(np.array([0.5, -0.5, -0.6]))]
    fill.diffuse = [0.15, 0.15, 0.15]
    fill.castshadow = False


def _matte(spec: Any, name: str, rgba: list[float]) -> str:
    """The name of a material of colour `rgba` without the default's specular sheen (added once)."""
    if spec.material(name) is None:
        material = spec.add_material()
        material.name = name
        material.rgba = rgba
        material.specular = 0.05
        material.shininess = 0.1
    return name


def _look_at_quat(position: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The (w, x, y, z) rotation of a MuJoCo camera at `position` looking at `target`, z up.

    A MuJoCo camera looks along its -z axis with +y up in the image.
    """
    import mujoco

    backward = _unit(np.asarray(position, dtype=float) - np.asarray(target, dtype=float))
    right = np.cross([0.0, 0.0, 1.0], backward)
    if np.linalg.norm(right) < 1e-9:  # looking straight down: image up is +x
        right = np.array([0.0, -1.0, 0.0])
    right = _unit(right)
    up = np.cross(backward, right)
    matrix = np.column_stack([right, up, backward])
    quat = np.empty(4)
    mujoco.mju_mat2Quat(quat, matrix.flatten())
    return quat


def _unit(vector: np.ndarray) -> np.ndarray:
    return np.asarray(vector / np.linalg.norm(vector), dtype=float)
