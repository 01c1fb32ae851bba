"""What world changes (`platform_contracts.world_changes`) do to an environment: its MuJoCo model and
data, and what the agent sees.

The MuJoCo model and data are found through the environment, never kept (a restored
environment has new ones): `env.unwrapped.model` / `.data` (Menagerie robots, Gymnasium MuJoCo)
or `env.unwrapped.physics.model.ptr` / `.data.ptr` (DeepMind Control). Every value is set
relative to the model as built (`BuiltValues`, copied when the timeline is put on), so a
change replaces, never compounds, an earlier one of the same target. Masses and positions
change constants MuJoCo derives at compile time: `mj_setConst` recomputes them (on a scratch
MjData: it overwrites the state of the one it is given), then the environment's forward pass
makes the current derived quantities agree (dm_control's step starts from them).

Sensor kinds act on the flat observation (`gymnasium.spaces.flatten` of a Box or a Dict of
Boxes) and the result is clipped to the observation space (rounded for integer dtypes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces
from platform_contracts.world_changes import WorldChange, WorldFacts

__all__ = [
    "BuiltValues",
    "MujocoHandle",
    "ObservationSensors",
    "apply_model_change",
    "built_values",
    "find_mujoco",
    "live_facts",
    "mujoco_facts",
    "sensor_space",
]

_FREE_JOINT = 0  # mujoco.mjtJoint.mjJNT_FREE


@dataclass(frozen=True)
class MujocoHandle:
    """The raw MuJoCo objects of an environment, found afresh each time they are needed.

    Attributes:
        model, data: `mujoco.MjModel` and `mujoco.MjData`.
        forward: recomputes the derived quantities of the current state (dm_control's
            `physics.forward`, else `mj_forward`).
        unwrapped: the environment itself (its `init_qpos`, when it has one, is where a
            Gymnasium MuJoCo environment resets to).
    """

    model: Any
    data: Any
    forward: Callable[[], None]
    unwrapped: Any


def find_mujoco(env: Any) -> MujocoHandle | None:
    """The MuJoCo model and data of `env` (see the module docstring); None when it has none."""
    try:
        import mujoco
    except ImportError:
        return None
    unwrapped = getattr(env, "unwrapped", env)
    physics = getattr(unwrapped, "physics", None)
    if physics is not None:
        model, data = getattr(getattr(physics, "model", None), "ptr", None), getattr(getattr(physics, "data", None), "ptr", None)
        if isinstance(model, mujoco.MjModel) and isinstance(data, mujoco.MjData):
            return MujocoHandle(model, data, physics.forward, unwrapped)
    model, data = getattr(unwrapped, "model", None), getattr(unwrapped, "data", None)
    if isinstance(model, mujoco.MjModel) and isinstance(data, mujoco.MjData):
        return MujocoHandle(model, data, lambda: mujoco.mj_forward(model, data), unwrapped)
    return None


def sensor_space(space: Any) -> bool:
    """Whether sensor kinds can act on observations of `space` (a Box or a Dict of them)."""
    return _leaf_boxes(space) is not None


def live_facts(env: Any) -> WorldFacts:
    """What a timeline may name in the live `env`."""
    space = env.observation_space
    sensors = sensor_space(space)
    size = int(spaces.flatdim(space)) if sensors else None
    handle = find_mujoco(env)
    if handle is None:
        return WorldFacts(mujoco=False, observation_size=size, sensors=sensors)
    return mujoco_facts(handle.model, size, sensors)


def mujoco_facts(model: Any, observation_size: int | None, sensors: bool = True) -> WorldFacts:
    """The facts of a MuJoCo environment of raw `model` whose flat observation has
    `observation_size` values (the catalog generators' and `live_facts`')."""
    return WorldFacts(
        mujoco=True,
        bodies=_named(model.body, model.nbody, skip_world=True),
        actuators=_named(model.actuator, model.nu),
        geoms=_named(model.geom, model.ngeom),
        observation_size=observation_size,
        sensors=sensors,
    )


def _named(accessor: Callable[[int], Any], count: int, skip_world: bool = False) -> tuple[str, ...]:
    names = (accessor(i).name for i in range(1 if skip_world else 0, count))
    return tuple(name for name in names if name)


# --- the model ----------------------------------------------------------------------------


@dataclass
class BuiltValues:
    """Copies of the model values world changes edit, as built (picklable: numpy arrays)."""

    body_mass: np.ndarray
    body_inertia: np.ndarray
    geom_friction: np.ndarray
    actuator_gainprm: np.ndarray
    actuator_biasprm: np.ndarray
    body_pos: np.ndarray
    qpos0: np.ndarray
    init_qpos: np.ndarray | None  # the environment's reset pose, when it keeps one (Gymnasium MuJoCo)


def built_values(handle: MujocoHandle) -> BuiltValues:
    """The values `apply_model_change` edits, from a model that is still as built."""
    model = handle.model
    init_qpos = getattr(handle.unwrapped, "init_qpos", None)
    keep_init = isinstance(init_qpos, np.ndarray) and init_qpos.shape == (model.nq,)
    return BuiltValues(
        body_mass=np.array(model.body_mass),
        body_inertia=np.array(model.body_inertia),
        geom_friction=np.array(model.geom_friction),
        actuator_gainprm=np.array(model.actuator_gainprm),
        actuator_biasprm=np.array(model.actuator_biasprm),
        body_pos=np.array(model.body_pos),
        qpos0=np.array(model.qpos0),
        init_qpos=np.array(init_qpos) if keep_init else None,
    )


def apply_model_change(
    handle: MujocoHandle, built: BuiltValues, change: WorldChange, offsets: dict[str, np.ndarray]
) -> None:
    """Apply a MuJoCo kind of `change` to the model (and, for positions, the state) of `handle`.

    Args:
        built: the model's values as built.
        offsets: the position offset in force per body name (updated): a free or mocap body is
            moved now by the difference from the offset in force before.

    Raises:
        ValueError: the change names something the model lacks (checked before, so not expected).
    """
    model, values = handle.model, change.values
    kind = change.change
    constants = False
    if kind == "mass":
        body = _id(model.body, values["body"])
        scale = values["scale"]
        model.body_mass[body] = built.body_mass[body] * scale
        model.body_inertia[body] = built.body_inertia[body] * scale
        constants = True
    elif kind == "friction":
        geoms = _friction_geoms(model, values)
        model.geom_friction[geoms] = built.geom_friction[geoms] * values["scale"]
    elif kind == "motor_strength":
        actuators = [_id(model.actuator, values["actuator"])] if "actuator" in values else list(range(model.nu))
        scale = values["scale"]
        model.actuator_gainprm[actuators, 0] = built.actuator_gainprm[actuators, 0] * scale
        model.actuator_biasprm[actuators, 0:3] = built.actuator_biasprm[actuators, 0:3] * scale
    elif kind == "position":
        _move_body(handle, built, values["body"], np.array(values["offset"]), offsets)
        constants = True
    else:
        raise ValueError(f"{kind} is not a change of the MuJoCo model")
    if constants:
        _set_constants(model)
    handle.forward()


def _id(accessor: Callable[[str], Any], name: str) -> int:
    try:
        return int(accessor(name).id)
    except KeyError:
        raise ValueError(f"the model has no {name!r}") from None


def _friction_geoms(model: Any, values: Any) -> list[int]:
    if "geom" in values:
        return [_id(model.geom, values["geom"])]
    if "body" in values:
        body = _id(model.body, values["body"])
        return [int(i) for i in np.flatnonzero(model.geom_bodyid == body)]
    return list(range(model.ngeom))


def _move_body(handle: MujocoHandle, built: BuiltValues, name: str, offset: np.ndarray,
               offsets: dict[str, np.ndarray]) -> None:
    model, data = handle.model, handle.data
    body = _id(model.body, name)
    delta = offset - offsets.get(name, np.zeros(3))
    offsets[name] = offset
    mocap = int(model.body_mocapid[body])
    joint = int(model.body_jntadr[body]) if model.body_jntnum[body] > 0 else -1
    if mocap >= 0:
        model.body_pos[body] = built.body_pos[body] + offset  # where resets put it
        data.mocap_pos[mocap] += delta
    elif joint >= 0 and int(model.jnt_type[joint]) == _FREE_JOINT:
        address = int(model.jnt_qposadr[joint])
        where = slice(address, address + 3)
        model.qpos0[where] = built.qpos0[where] + offset
        init_qpos = getattr(handle.unwrapped, "init_qpos", None)
        if built.init_qpos is not None and isinstance(init_qpos, np.ndarray):
            init_qpos[where] = built.init_qpos[where] + offset
        data.qpos[where] += delta
    else:
        model.body_pos[body] = built.body_pos[body] + offset


def _set_constants(model: Any) -> None:
    import mujoco

    mujoco.mj_setConst(model, mujoco.MjData(model))  # a scratch MjData: mj_setConst overwrites its state


# --- what the agent sees ------------------------------------------------------------------


def _leaf_boxes(space: Any) -> list[spaces.Box] | None:
    """The Boxes of `space` in `gymnasium.spaces.flatten`'s order; None unless it is a Box or a
    Dict (of Dicts) of Boxes."""
    if isinstance(space, spaces.Box):
        return [space]
    if isinstance(space, spaces.Dict):
        leaves: list[spaces.Box] = []
        for subspace in space.spaces.values():
            found = _leaf_boxes(subspace)
            if found is None:
                return None
            leaves += found
        return leaves
    return None


class ObservationSensors:
    """The sensor changes in force on one observation space: an offset, a noise std and a
    noise seed per value of the flat observation (picklable: it goes into snapshots with the
    timeline).

    Args:
        space: the observation space (a Box or a Dict of Boxes: `sensor_space`).
    """

    def __init__(self, space: Any) -> None:
        leaves = _leaf_boxes(space)
        if leaves is None:
            raise ValueError(f"sensor changes need a Box or a Dict of Boxes, not {space}")
        self.space = space
        self.size = int(spaces.flatdim(space))
        self.low = np.concatenate([np.asarray(box.low, np.float64).ravel() for box in leaves])
        self.high = np.concatenate([np.asarray(box.high, np.float64).ravel() for box in leaves])
        self.integer = np.concatenate(
            [np.full(int(np.prod(box.shape)), not np.issubdtype(box.dtype, np.floating)) for box in leaves]
        )
        self.offset = np.zeros(self.size)
        self.std = np.zeros(self.size)
        self.seed = np.zeros(self.size, np.int64)
        self.in_force = False

    def apply(self, change: WorldChange) -> None:
        """Put a sensor kind of `change` in force (for its indices: all by default)."""
        values = change.values
        indices = list(values["indices"]) if "indices" in values else slice(None)
        if change.change == "sensor_offset":
            offset = values["offset"]
            self.offset[indices] = np.asarray(offset, np.float64) if isinstance(offset, tuple) else offset
        elif change.change == "sensor_noise":
            self.std[indices] = values["std"]
            self.seed[indices] = values["seed"]
        else:
            raise ValueError(f"{change.change} is not a sensor change")
        self.in_force = bool(np.any(self.offset != 0) or np.any(self.std > 0))

    def sense(self, observation: Any, session_step: int) -> Any:
        """What the agent sees of `observation` (the true one) at `session_step`."""
        seen = np.asarray(spaces.flatten(self.space, observation), np.float64) + self.offset
        noisy = self.std > 0
        if noisy.any():
            for seed in np.unique(self.seed[noisy]):
                where = noisy & (self.seed == seed)
                draws = np.random.default_rng([int(seed), session_step]).standard_normal(self.size)
                seen[where] += draws[where] * self.std[where]
        np.clip(seen, self.low, self.high, out=seen)
        if self.integer.any():
            seen[self.integer] = np.rint(seen[self.integer])
        return spaces.unflatten(self.space, seen)
