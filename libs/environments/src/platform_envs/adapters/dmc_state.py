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
snapshot in this process, else the suite task loaded again. The capture and restore of a raw
model and data are `platform_envs.mujoco_state`'s, shared with the Menagerie robots.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from platform_envs import mujoco_state
from platform_envs.mujoco_state import FIXED_ARRAY_PREFIXES, PhysicsState, copy_arrays, mutable_array_names

__all__ = [
    "FIXED_ARRAY_PREFIXES",
    "PhysicsState",
    "apply",
    "built_physics",
    "capture",
    "copy_arrays",
    "forget_built_models",
    "mutable_array_names",
    "remember_built_model",
]


def capture(physics: Any, built: dict[str, np.ndarray]) -> PhysicsState:
    """The state of `physics` (a dm_control Physics); `built` = `copy_arrays` of its model as built."""
    return mujoco_state.capture(physics.model.ptr, physics.data.ptr, built)


def apply(physics: Any, state: PhysicsState) -> None:
    """Put `state` into `physics`, whose model is as built, then recompute derived quantities."""
    mujoco_state.apply(physics.model.ptr, physics.data.ptr, state)
    # dm_control's (legacy) step starts with mj_step2, which needs the mj_step1 of the state
    # it finishes: mj_forward recomputes it (and more, which the next step recomputes again)
    physics.forward()


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
