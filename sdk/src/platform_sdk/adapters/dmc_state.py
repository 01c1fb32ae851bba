"""The picklable state of a dm_control physics: what changed in its model, and its mjData state.

Suite tasks change their model when an episode starts (a target's position, a terrain's
height field, a joint's damping), so a snapshot holds, besides the integration state
(`mj_getState(mjSTATE_INTEGRATION)`: time, qpos, qvel, act, warm start, controls, applied
forces, mocap, ...: everything a bit-exact continuation needs), every model array that
differs from the model as built, and the physics options (`model.opt`). Textures, meshes,
skins and bounding-volume trees are taken as fixed (no suite task changes them): they are
most of a model's bytes (12 MB for most domains, 73 MB for dog).

A model pickled whole would be as large; a diff is a few KB (quadruped escape: its 160 KB
terrain). A restore starts from the model as built: a copy of the one remembered by the last
snapshot in this process, else the suite task loaded again.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

# Model arrays left out of diffs: assets and structures derived from them at compile time.
FIXED_ARRAY_PREFIXES: tuple[str, ...] = ("tex_", "mesh_", "skin_", "bvh_", "flex_", "oct_")


@dataclass(frozen=True)
class PhysicsState:
    """What a snapshot keeps of a physics (see the module docstring)."""

    model_arrays: dict[str, np.ndarray]
    options: dict[str, Any]
    integration: np.ndarray


_NAMES: dict[type, tuple[str, ...]] = {}


def mutable_array_names(model: Any) -> tuple[str, ...]:
    """The names of the arrays of `model` (a raw `mujoco.MjModel`) that a diff compares."""
    names = _NAMES.get(type(model))
    if names is None:  # the same for every model of a type: computed once
        names = tuple(
            name
            for name in dir(model)
            if not name.startswith(("_", *FIXED_ARRAY_PREFIXES))
            and isinstance(getattr(model, name, None), np.ndarray)
        )
        _NAMES[type(model)] = names
    return names


def copy_arrays(model: Any) -> dict[str, np.ndarray]:
    """Copies of the arrays of `model` (a raw `mujoco.MjModel`) that diffs compare."""
    return {name: np.array(getattr(model, name)) for name in mutable_array_names(model)}


def capture(physics: Any, built: dict[str, np.ndarray]) -> PhysicsState:
    """The state of `physics` (a dm_control Physics); `built` = `copy_arrays` of its model as built."""
    import mujoco

    model = physics.model.ptr
    changed = {}
    for name, original in built.items():
        current = getattr(model, name)
        if not _same_bits(current, original):
            changed[name] = np.array(current)
    options = {name: _copy(getattr(model.opt, name)) for name in _option_names(model.opt)}
    kind = mujoco.mjtState.mjSTATE_INTEGRATION
    integration = np.empty(mujoco.mj_stateSize(model, kind), np.float64)
    mujoco.mj_getState(model, physics.data.ptr, integration, kind)
    return PhysicsState(model_arrays=changed, options=options, integration=integration)


def apply(physics: Any, state: PhysicsState) -> None:
    """Put `state` into `physics`, whose model is as built, then recompute derived quantities."""
    import mujoco

    model = physics.model.ptr
    for name, value in state.model_arrays.items():
        np.copyto(getattr(model, name), value)
    for name, value in state.options.items():
        target = getattr(model.opt, name)
        if isinstance(target, np.ndarray):
            np.copyto(target, value)
        else:
            setattr(model.opt, name, value)
    kind = mujoco.mjtState.mjSTATE_INTEGRATION
    mujoco.mj_setState(model, physics.data.ptr, state.integration, kind)
    # dm_control's (legacy) step starts with mj_step2, which needs the mj_step1 of the state
    # it finishes: mj_forward recomputes it (and more, which the next step recomputes again)
    physics.forward()


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit-equal (NaN equals NaN, 0.0 differs from -0.0); the arrays compared are small."""
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def _option_names(options: Any) -> list[str]:
    return [
        name
        for name in dir(options)
        if not name.startswith("_") and isinstance(getattr(options, name), (int, float, np.ndarray))
    ]


def _copy(value: Any) -> Any:
    return np.array(value) if isinstance(value, np.ndarray) else value


# The model as built of the last configuration snapshotted, so that a restore copies it instead
# of compiling the XML again (70 ms for most domains, 700 ms for dog). One entry: an environment
# server hosts one environment, and a model is 12-73 MB.
_BUILT_MODELS: OrderedDict[str, tuple[Any, Any]] = OrderedDict()
BUILT_MODELS_KEPT = 1


def remember_built_model(key: str, physics: Any, built: dict[str, np.ndarray]) -> None:
    """Keep the model of `physics` as built (`built` = its `copy_arrays` then) under `key`."""
    if key in _BUILT_MODELS:
        _BUILT_MODELS.move_to_end(key)
        return
    model = copy.copy(physics.model.ptr)
    for name, value in built.items():  # undo the task's changes
        np.copyto(getattr(model, name), value)
    _BUILT_MODELS[key] = (type(physics), model)
    while len(_BUILT_MODELS) > BUILT_MODELS_KEPT:
        _BUILT_MODELS.popitem(last=False)


def built_physics(key: str, load: Callable[[], Any]) -> Any:
    """A new physics of the model remembered under `key`, or `load()`'s when there is none."""
    entry = _BUILT_MODELS.get(key)
    if entry is None:
        return load()
    from dm_control.mujoco import wrapper

    physics_type, model = entry
    return physics_type.from_model(wrapper.MjModel(copy.copy(model)))


def forget_built_models() -> None:
    """Drop the remembered models (the next restore compiles its model again)."""
    _BUILT_MODELS.clear()
