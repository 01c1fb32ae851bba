"""The picklable state of a raw MuJoCo model and data: model edits and the integration state.

A snapshot holds every model array that differs from the model as built (world changes and
tasks edit masses, positions, friction), the physics options (`model.opt`) and the integration
state (`mj_getState(mjSTATE_INTEGRATION)`: time, qpos, qvel, act, warm start, controls,
applied forces, mocap: what a bit-exact continuation needs). Textures, meshes, skins and
bounding-volume trees are taken as fixed: they are most of a model's bytes and nothing edits
them. A restore starts from a fresh copy of the model as built and applies the state.

Used by the Menagerie robots (`platform_envs.robots.mujoco_env`) and the DeepMind Control adapter
(`platform_envs.adapters.dmc_state`, through its Physics' raw model and data). Standard library,
numpy and (inside the functions) mujoco only, so importing it stays cheap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

# Model arrays left out of diffs: assets and structures derived from them at compile time.
FIXED_ARRAY_PREFIXES: tuple[str, ...] = ("tex_", "mesh_", "skin_", "bvh_", "flex_", "oct_")


@dataclass(frozen=True)
class PhysicsState:
    """What a snapshot keeps of a MuJoCo model and data (see the module docstring)."""

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


def capture(model: Any, data: Any, built: dict[str, np.ndarray]) -> PhysicsState:
    """The state of raw `model` and `data`; `built` = `copy_arrays` of the model as built."""
    import mujoco

    changed = {}
    for name, original in built.items():
        current = getattr(model, name)
        if not _same_bits(current, original):
            changed[name] = np.array(current)
    options = {name: _copy(getattr(model.opt, name)) for name in _option_names(model.opt)}
    kind = mujoco.mjtState.mjSTATE_INTEGRATION
    integration = np.empty(mujoco.mj_stateSize(model, kind), np.float64)
    mujoco.mj_getState(model, data, integration, kind)
    return PhysicsState(model_arrays=changed, options=options, integration=integration)


def apply(model: Any, data: Any, state: PhysicsState) -> None:
    """Put `state` into raw `model` (as built) and `data`; derived quantities are not recomputed
    (call `mj_forward`, or the caller's equivalent, after)."""
    import mujoco

    for name, value in state.model_arrays.items():
        np.copyto(getattr(model, name), value)
    for name, value in state.options.items():
        target = getattr(model.opt, name)
        if isinstance(target, np.ndarray):
            np.copyto(target, value)
        else:
            setattr(model.opt, name, value)
    mujoco.mj_setState(model, data, state.integration, mujoco.mjtState.mjSTATE_INTEGRATION)


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
