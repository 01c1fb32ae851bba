"""The pick and place scene: the arm's table with a block to pick, two bins, and a green ball.

`add_pick_place(spec, layout)` adds to the arm scene (`arm_scene.arm_spec`, without its
target sphere; `pick_place_spec(facts)` builds both):

- a block: a 4 cm cube on a free joint, light (50 g) and grippy (friction 1.5, torsional
  friction, stiff contacts, and priority over the fingers' pads so its contact settings are
  the ones used), small enough for both grippers (the Panda's opens 8 cm, the xArm's 9 cm);
- two bins on the far half of the table, one each side of the hand's home: open boxes of
  1 cm walls, 5 cm high, 13 cm square inside, so a block dropped from the hand over a bin
  stays in it;
- a green ball, a mocap body that touches nothing (no collision, no mass), floating above the
  bin the block must go in.

Each episode draws (`draw_episode`, from the environment's seeded generator) which bin is the
target and where the block starts: anywhere on the near half of the table within the hand's
reach, turned by up to `BLOCK_MAX_YAW` about the vertical. `PickPlaceScene` binds the names to
a compiled model's ids and answers the questions the task asks of a state: where the block is,
how fast it moves, which bin holds it, whether the fingers touch it.

Every place is relative to the hand's home (`ArmLayout.home.hand_position`) and the table's
top, so the same numbers suit both arms. Importing this module imports no MuJoCo.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from platform_envs.robots.arm_scene import ArmLayout, arm_spec
from platform_envs.robots.arms import ArmFacts

BLOCK = "block"
BLOCK_HALF_SIZE = 0.02  # m: a 4 cm cube
BLOCK_MASS = 0.05  # kg
BLOCK_FRICTION = (1.5, 0.01, 0.0002)  # sliding, torsional, rolling
BLOCK_SOLREF = (0.004, 1.0)
BLOCK_SOLIMP = (0.95, 0.99, 0.001, 0.5, 2.0)
BLOCK_MAX_YAW = 0.3  # rad: the block starts turned by up to this about the vertical
BALL = "ball"
BALL_RADIUS = 0.025
BALL_HEIGHT = 0.14  # m above the bin's rim
BIN_NAMES = ("bin_0", "bin_1")
BIN_INNER_HALF = 0.065  # m: half the inside width of a bin
BIN_WALL_HALF = 0.005  # m: half a wall's thickness
BIN_FLOOR_HALF = 0.004  # m: half the bin floor's thickness
BIN_HEIGHT = 0.05  # m from the table to the rim
BIN_CENTERS = ((0.14, 0.15), (0.14, -0.15))  # (x, y) from the hand's home
BLOCK_START_LOW = (-0.16, -0.15)  # the block's start area (x, y) from the hand's home
BLOCK_START_HIGH = (-0.02, 0.15)
BLOCK_COLOR = (0.95, 0.55, 0.1, 1.0)
BIN_COLOR = (0.3, 0.45, 0.75, 1.0)
BALL_COLOR = (0.1, 0.85, 0.2, 0.9)


@dataclasses.dataclass(frozen=True)
class PickPlaceLayout:
    """Where the pick and place scene's things are (world frame, metres).

    Attributes:
        arm: the arm's layout (table, home).
        bin_centers: each bin's centre on the table (x, y, z of the table's top), in
            `BIN_NAMES` order.
        bin_floor: the height of a bin floor's top (where a placed block rests).
        bin_rim: the height of a bin's rim.
        block_rest_height: the block centre's height when it rests on the table.
        start_low, start_high: the corners (x, y) of the block's start area.
    """

    arm: ArmLayout
    bin_centers: tuple[tuple[float, float, float], ...]
    bin_floor: float
    bin_rim: float
    block_rest_height: float
    start_low: tuple[float, float]
    start_high: tuple[float, float]

    def ball_position(self, target_bin: int) -> np.ndarray:
        """Where the green ball floats when `target_bin` is the one the block must go in."""
        x, y, _ = self.bin_centers[target_bin]
        return np.array([x, y, self.bin_rim + BALL_HEIGHT])


@dataclasses.dataclass(frozen=True)
class Episode:
    """What an episode starts with: the target bin and the block's pose."""

    target_bin: int
    block_position: np.ndarray  # (3,)
    block_quaternion: np.ndarray  # (4,) w, x, y, z


def pick_place_spec(facts: ArmFacts) -> tuple[Any, PickPlaceLayout]:
    """The arm scene with the block, the bins and the ball, as an uncompiled `mujoco.MjSpec`."""
    spec, arm = arm_spec(facts, target=False)
    layout = pick_place_layout(arm)
    add_pick_place(spec, layout)
    return spec, layout


def add_pick_place(spec: Any, layout: PickPlaceLayout) -> None:
    """Add the block, the bins and the ball to an arm scene's `spec` (one without its target)."""
    _add_block(spec, layout)
    for name, center in zip(BIN_NAMES, layout.bin_centers, strict=True):
        _add_bin(spec, name, center)
    _add_ball(spec, layout)


def pick_place_layout(arm: ArmLayout) -> PickPlaceLayout:
    """Where the bins, the block's start area and the ball go in the arm scene `arm`."""
    hand_x, hand_y, _ = arm.home.hand_position
    table = arm.table_top
    centers = tuple((hand_x + dx, hand_y + dy, table) for dx, dy in BIN_CENTERS)
    return PickPlaceLayout(
        arm=arm,
        bin_centers=centers,
        bin_floor=table + 2 * BIN_FLOOR_HALF,
        bin_rim=table + BIN_HEIGHT,
        block_rest_height=table + BLOCK_HALF_SIZE,
        start_low=(hand_x + BLOCK_START_LOW[0], hand_y + BLOCK_START_LOW[1]),
        start_high=(hand_x + BLOCK_START_HIGH[0], hand_y + BLOCK_START_HIGH[1]),
    )


def draw_episode(layout: PickPlaceLayout, rng: np.random.Generator) -> Episode:
    """The target bin and the block's start pose, drawn from `rng` (uniform over the start area)."""
    target_bin = int(rng.integers(len(BIN_NAMES)))
    x, y = rng.uniform(layout.start_low, layout.start_high)
    yaw = rng.uniform(-BLOCK_MAX_YAW, BLOCK_MAX_YAW)
    quaternion = np.array([np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])
    return Episode(target_bin, np.array([x, y, layout.block_rest_height]), quaternion)


class PickPlaceScene:
    """The scene's names bound to one compiled model's ids, and what a state says about them.

    Args:
        model: the compiled `pick_place_spec` model.
        layout: its layout.
    """

    def __init__(self, model: Any, layout: PickPlaceLayout) -> None:
        self.layout = layout
        facts = layout.arm.facts
        block_joint = model.joint(BLOCK).id
        self.block_qpos = int(model.jnt_qposadr[block_joint])
        self.block_dof = int(model.jnt_dofadr[block_joint])
        self.block_geom = int(model.geom(BLOCK).id)
        self.ball_mocap = int(model.body_mocapid[model.body(BALL).id])
        self.bin_bodies = np.array([model.body(name).id for name in BIN_NAMES], dtype=np.int64)
        finger_ids = [int(model.body(name).id) for name in facts.finger_bodies]
        # each finger's geoms, to tell a grasp (every finger touches) from a nudge
        self.finger_geoms = [
            np.array([g for g in range(model.ngeom) if int(model.geom_bodyid[g]) == body], dtype=np.int64)
            for body in finger_ids
        ]

    # state written at reset

    def place(self, model: Any, data: Any, episode: Episode, shift: np.ndarray) -> None:
        """Put the block at the episode's start moved by `shift` (m; at rest), the ball over
        its target bin."""
        data.qpos[self.block_qpos : self.block_qpos + 3] = episode.block_position + shift
        data.qpos[self.block_qpos + 3 : self.block_qpos + 7] = episode.block_quaternion
        data.qvel[self.block_dof : self.block_dof + 6] = 0.0
        self.show_ball(model, data, episode.target_bin)

    def show_ball(self, model: Any, data: Any, target_bin: int) -> None:
        """Float the green ball over bin `target_bin` (where that bin is now)."""
        above = np.array([0.0, 0.0, BIN_HEIGHT + BALL_HEIGHT])
        data.mocap_pos[self.ball_mocap] = self.bin_centers(model)[target_bin] + above

    # what a state says

    def block_position(self, data: Any) -> np.ndarray:
        """The block centre's world position (3,), a copy."""
        return np.array(data.qpos[self.block_qpos : self.block_qpos + 3], dtype=np.float64)

    def block_speed(self, data: Any) -> tuple[float, float]:
        """The block's linear (m/s) and angular (rad/s) speed."""
        velocity = data.qvel[self.block_dof : self.block_dof + 6]
        return float(np.linalg.norm(velocity[:3])), float(np.linalg.norm(velocity[3:]))

    def ball_position(self, data: Any) -> np.ndarray:
        """The green ball's world position (3,), a copy."""
        return np.array(data.mocap_pos[self.ball_mocap])

    def bin_centers(self, model: Any) -> np.ndarray:
        """Each bin's centre at the table's top, (2, 3), where the model has it now (a world
        change may move a bin)."""
        return np.array(model.body_pos[self.bin_bodies])

    def bin_holding(self, model: Any, position: np.ndarray) -> int | None:
        """The index of the bin whose inside holds the point `position` (below its rim), or None."""
        centers = self.bin_centers(model)
        inside_xy = np.all(np.abs(centers[:, :2] - position[:2]) <= BIN_INNER_HALF, axis=1)
        height = position[2] - centers[:, 2]
        inside = inside_xy & (height >= 2 * BIN_FLOOR_HALF) & (height <= BIN_HEIGHT)
        hits = np.flatnonzero(inside)
        return int(hits[0]) if len(hits) else None

    def fingers_touching_block(self, data: Any) -> tuple[bool, ...]:
        """For each finger (`ArmFacts.finger_bodies` order), whether it touches the block now."""
        contacts = data.contact.geom[: data.ncon]
        with_block = contacts[np.any(contacts == self.block_geom, axis=1)]
        others = with_block.sum(axis=1) - self.block_geom
        return tuple(bool(np.isin(others, geoms).any()) for geoms in self.finger_geoms)


def _add_block(spec: Any, layout: PickPlaceLayout) -> None:
    import mujoco

    body = spec.worldbody.add_body()
    body.name = BLOCK
    center = layout.bin_centers[0]
    body.pos = [center[0], center[1], layout.block_rest_height]  # moved at every reset
    joint = body.add_freejoint()
    joint.name = BLOCK
    geom = body.add_geom()
    geom.name = BLOCK
    geom.type = mujoco.mjtGeom.mjGEOM_BOX
    geom.size = [BLOCK_HALF_SIZE] * 3
    geom.mass = BLOCK_MASS
    geom.friction = list(BLOCK_FRICTION)
    geom.condim = 4  # torsional friction: a block held off its centre does not spin
    geom.priority = 2  # the fingers' pads have priority 1 (xArm): the block's contact wins
    # stiff contacts, as the xArm's pads have: with MuJoCo's soft defaults the block creeps
    # down through the xArm's grip while it is carried
    geom.solref = list(BLOCK_SOLREF)
    geom.solimp = list(BLOCK_SOLIMP)
    geom.rgba = list(BLOCK_COLOR)


def _add_bin(spec: Any, name: str, center: tuple[float, float, float]) -> None:
    import mujoco

    x, y, table = center
    body = spec.worldbody.add_body()
    body.name = name
    body.pos = [x, y, table]
    outer = BIN_INNER_HALF + 2 * BIN_WALL_HALF
    half_height = BIN_HEIGHT / 2
    wall = BIN_INNER_HALF + BIN_WALL_HALF  # a wall's centre from the bin's centre
    parts = {  # name: (half sizes, centre from the bin's base)
        "floor": ([BIN_INNER_HALF, BIN_INNER_HALF, BIN_FLOOR_HALF], [0.0, 0.0, BIN_FLOOR_HALF]),
        "wall_px": ([BIN_WALL_HALF, outer, half_height], [wall, 0.0, half_height]),
        "wall_nx": ([BIN_WALL_HALF, outer, half_height], [-wall, 0.0, half_height]),
        "wall_py": ([BIN_INNER_HALF, BIN_WALL_HALF, half_height], [0.0, wall, half_height]),
        "wall_ny": ([BIN_INNER_HALF, BIN_WALL_HALF, half_height], [0.0, -wall, half_height]),
    }
    for part, (size, pos) in parts.items():
        geom = body.add_geom()
        geom.name = f"{name}_{part}"
        geom.type = mujoco.mjtGeom.mjGEOM_BOX
        geom.size = size
        geom.pos = pos
        geom.rgba = list(BIN_COLOR)
        geom.friction = [1.0, 0.005, 0.0001]


def _add_ball(spec: Any, layout: PickPlaceLayout) -> None:
    import mujoco

    body = spec.worldbody.add_body()
    body.name = BALL
    body.mocap = True
    body.pos = [float(v) for v in layout.ball_position(0)]  # moved at every reset
    geom = body.add_geom()
    geom.name = BALL
    geom.type = mujoco.mjtGeom.mjGEOM_SPHERE
    geom.size = [BALL_RADIUS, 0.0, 0.0]
    geom.rgba = list(BALL_COLOR)
    geom.contype = 0
    geom.conaffinity = 0
    geom.mass = 0.0
