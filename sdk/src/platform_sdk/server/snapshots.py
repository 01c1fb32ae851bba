"""Capture and restore the full state of an environment, RNG included, by pickling it.

The whole wrapped environment is pickled (its `np_random`, its spaces' RNGs, the wrappers'
state such as TimeLimit's elapsed steps) together with the last observation and info. Render
resources (pygame surfaces and clocks, MuJoCo viewers, GL contexts) are left out and come back
as None, so the restored environment re-creates them lazily when it next renders.

Gymnasium's `EzPickle` environments (MuJoCo, Box2D, ALE) pickle as their constructor's
arguments and unpickle as a NEW environment; snapshots pickle their attributes instead, so a
restored MuJoCo environment keeps its simulation state.
"""

from __future__ import annotations

import copyreg
import io
import pickle
from dataclasses import dataclass
from typing import Any

from gymnasium.utils.ezpickle import EzPickle

from platform_sdk.server.errors import ServerError
from platform_sdk.server.moved_modules import current_module

# Objects whose type comes from these modules are render resources: they are not pickled.
RENDER_MODULE_PREFIXES: tuple[str, ...] = (
    "pygame",
    "pyglet",
    "OpenGL",
    "glfw",
    "mujoco.gl",
    "mujoco.egl",
    "mujoco.glfw",
    "mujoco.osmesa",
    "mujoco.renderer",
    "mujoco.rendering",  # mujoco.Renderer and its GL contexts (mujoco.rendering.classic.*)
    "mujoco._render",
)
# Render resources named by type (their module also holds things that must be kept, such as
# gymnasium's MujocoRenderer, which re-creates its viewers when they are None).
RENDER_TYPES: frozenset[str] = frozenset(
    {
        "gymnasium.envs.mujoco.mujoco_rendering.BaseRender",
        "gymnasium.envs.mujoco.mujoco_rendering.OffScreenViewer",
        "gymnasium.envs.mujoco.mujoco_rendering.WindowViewer",
    }
)
_LEFT_OUT = "render-resource"


class SnapshotError(ServerError):
    """The environment's state cannot be captured (something in it cannot be pickled)."""


@dataclass(frozen=True)
class Snapshot:
    """The pickled state of an environment with its last observation and info."""

    data: bytes

    @property
    def size(self) -> int:
        return len(self.data)


def is_render_resource(obj: Any) -> bool:
    cls = type(obj)
    module = getattr(cls, "__module__", None) or ""
    return module.startswith(RENDER_MODULE_PREFIXES) or f"{module}.{cls.__qualname__}" in RENDER_TYPES


class _Pickler(pickle.Pickler):
    def persistent_id(self, obj: Any) -> str | None:
        return _LEFT_OUT if is_render_resource(obj) else None

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, EzPickle) and not isinstance(obj, type):
            # its attributes, not its constructor's arguments (EzPickle's own pickling)
            newobj = copyreg.__newobj__  # type: ignore[attr-defined]  # there at run time; typeshed lacks it
            return newobj, (type(obj),), obj.__dict__, None, None, _set_attributes
        return NotImplemented


def _set_attributes(obj: Any, state: dict[str, Any]) -> None:
    obj.__dict__.update(state)


class _Unpickler(pickle.Unpickler):
    def persistent_load(self, pid: Any) -> None:
        if pid != _LEFT_OUT:
            raise pickle.UnpicklingError(f"unknown persistent id {pid!r}")

    def find_class(self, module: str, name: str) -> Any:
        # a snapshot saved before a module moved names its old place (moved_modules)
        return super().find_class(current_module(module), name)


def capture(env: Any, observation: Any = None, info: Any = None) -> Snapshot:
    """Capture the full state of `env` with its last observation and info.

    Raises:
        SnapshotError: something in the environment cannot be pickled; the message says what.
    """
    buffer = io.BytesIO()
    try:
        _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump((env, observation, info))
    except Exception as exc:  # pickling can raise nearly anything (TypeError, AttributeError, ...)
        raise SnapshotError(
            f"the environment's state cannot be pickled: {type(exc).__name__}: {exc}"
        ) from exc
    return Snapshot(buffer.getvalue())


def restore(snapshot: Snapshot) -> tuple[Any, Any, Any]:
    """A new environment in the captured state, with the captured observation and info."""
    env, observation, info = _Unpickler(io.BytesIO(snapshot.data)).load()
    return env, observation, info
