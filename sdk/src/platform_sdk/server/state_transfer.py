"""`export_state` / `import_state`: the instance's whole state as bytes (saved snapshots).

The bytes are a snapshot (`platform_sdk.server.snapshots`: the pickled environment, RNG
included, render resources left out, with its last observation and info), format "pickle".
Importing unpickles them, so they must come from a trusted source (the env host, which keeps
them in the recorder's storage); bytes that do not unpickle to an environment of the same
class and spaces are refused with INVALID_ARGUMENT and leave the instance as it was. The
answer's `seconds` is the wall time the load took (unpickling and hosting the environment).
"""

from __future__ import annotations

import logging
import time
from typing import Any, Protocol

from platform_contracts.spaces import encode_value
from platform_contracts.values import datamap_from_dict
from platform_envs.world_change_timeline import timeline_of
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_sdk.server import snapshots
from platform_sdk.server.errors import CommandError

log = logging.getLogger(__name__)

STATE_FORMAT = "pickle"
_INVALID = env_pb.ERROR_CODE_INVALID_ARGUMENT


class StateHolder(Protocol):
    """What `export_state` and `import_state` need of the instance (an `EnvInstance`): its
    environment id, environment, latest observation and info, its check that it has been
    reset, and the hosting of another environment in its place."""

    @property
    def env_id(self) -> str: ...
    @property
    def env(self) -> Any: ...
    @property
    def observation(self) -> Any: ...
    @property
    def info(self) -> Any: ...
    def require_reset(self, command: str) -> None: ...
    def replace_env(self, env: Any, observation: Any, info: Any) -> None: ...


def answer_export_state(
    instance: StateHolder, request: env_pb.EnvRequest, response: env_pb.EnvResponse
) -> None:
    """The `export_state` command."""
    instance.require_reset("export_state")
    try:
        snapshot = snapshots.capture(instance.env, instance.observation, instance.info)
    except snapshots.SnapshotError as exc:
        raise CommandError(
            env_pb.ERROR_CODE_UNIMPLEMENTED, f"{instance.env_id} cannot be saved: {exc}"
        ) from None
    response.export_state.state = snapshot.data
    response.export_state.format = STATE_FORMAT


def answer_import_state(
    instance: StateHolder, request: env_pb.EnvRequest, response: env_pb.EnvResponse
) -> None:
    """The `import_state` command: the instance's environment becomes the imported one."""
    command = request.import_state
    if command.format not in ("", STATE_FORMAT):
        raise CommandError(_INVALID, f"unknown state format {command.format!r}: expected {STATE_FORMAT!r}")
    if not command.state:
        raise CommandError(_INVALID, "import_state has no state: pass the bytes export_state returned")
    started = time.perf_counter()
    env, observation, info = _load(instance, command.state)
    instance.replace_env(env, observation, info)
    result = response.import_state
    result.seconds = time.perf_counter() - started
    result.observation.CopyFrom(encode_value(observation, env.observation_space))
    result.info.CopyFrom(datamap_from_dict(info))


def _load(instance: StateHolder, data: bytes) -> tuple[Any, Any, Any]:
    try:
        env, observation, info = snapshots.restore(snapshots.Snapshot(data))
    except Exception as exc:  # noqa: BLE001 - unpickling foreign bytes can raise anything
        raise CommandError(
            _INVALID,
            f"the state is not an exported state of {instance.env_id}: it does not unpickle to one "
            f"({type(exc).__name__}: {exc})",
        ) from None
    problem = _mismatch(instance.env, env)
    if problem:
        _close_quietly(env)
        raise CommandError(_INVALID, f"the state is not an exported state of {instance.env_id}: {problem}")
    return env, observation, info


def _mismatch(current: Any, imported: Any) -> str:
    """Why `imported` cannot replace `current` ("" when it can)."""
    expected = type(getattr(current, "unwrapped", current))
    found = type(getattr(imported, "unwrapped", imported))
    if expected is not found:
        return f"it holds a {_name(found)}, not a {_name(expected)}"
    for name in ("observation_space", "action_space"):
        if getattr(current, name) != getattr(imported, name, None):
            return f"its {name.replace('_', ' ')} is {getattr(imported, name, None)}, not {getattr(current, name)}"
    if _timeline_entries(current) != _timeline_entries(imported):
        return "it was saved with another world_changes timeline: use the same kwargs"
    return ""


def _timeline_entries(env: Any) -> list[Any]:
    timeline = timeline_of(env)
    return [] if timeline is None else [change.entry for change in timeline.changes]


def _name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _close_quietly(env: Any) -> None:
    close = getattr(env, "close", None)
    try:
        if callable(close):
            close()
    except Exception:
        log.exception("closing a refused imported environment failed")
