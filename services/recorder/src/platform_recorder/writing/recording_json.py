"""recording.json: the session-level facts of a recording, written at its start and at its close.

    {"format": 1, "session_id", "env_id", "kwargs",
     "spec": {"observation_space", "action_space", "observation_labels": [{"name", "start", "stop"}],
              "metadata", "num_envs", "endless"},
     "parent_session_id"?, "env_index"?  (a vector session's sub-environment)
     "started_at", "closed_at" (null while recording), "status" ("recording"/"closed"/"crashed"),
     "world_changes": [...]}  (the world changes applied, see `recorded_world_changes`)

meta.json grows with every episode; this file changes when the session starts, when step events
bring world changes, and when it ends.
"""

from __future__ import annotations

import copy
from typing import Any

from platform_contracts.json_values import space_to_json
from platform_contracts.session_kwargs import ENDLESS
from platform_contracts.values import json_from_datamap
from platform_recorder.meta import RecordingMeta, RecordingStatus, encode_json, iso_time, strict_json
from simulusion.bus.v1 import events_pb2

RECORDING_FORMAT = 1


def new_recording_info(event: events_pb2.SessionEvent, kwargs: dict[str, Any]) -> dict[str, Any]:
    """recording.json of a recording that starts with this STARTED event.

    Args:
        kwargs: the environment's kwargs as meta.json keeps them (`RecordingMeta.from_started`:
            the event's `env_kwargs_json`, decoded once, non-finite floats as strings).
    """
    spec = event.spec
    try:
        metadata = json_from_datamap(spec.metadata)
    except Exception as exc:  # noqa: BLE001 - metadata is informative: never fail a recording on it
        metadata = {"_unreadable": f"{type(exc).__name__}: {exc}"}
    # Only the kwargs and metadata can hold non-finite floats (space_to_json writes them as
    # strings): an image space's bounds are not walked again.
    return {
        "format": RECORDING_FORMAT,
        "session_id": event.session_id,
        "env_id": event.options.env_id or spec.env_id,
        "kwargs": kwargs,
        "spec": {
            "observation_space": space_to_json(spec.observation_space)
            if spec.HasField("observation_space")
            else None,
            "action_space": space_to_json(spec.action_space) if spec.HasField("action_space") else None,
            "observation_labels": [
                {"name": label.name, "start": label.start, "stop": label.stop}
                for label in spec.observation_labels
            ],
            "metadata": strict_json(metadata),
            "num_envs": max(1, spec.num_envs),
            "endless": bool(spec.endless or event.options.endless),
        },
        "started_at": iso_time(event.time),
        "closed_at": None,
        "status": RecordingStatus.RECORDING.value,
        "world_changes": [],
    }


def sub_session_info(
    parent: dict[str, Any], session_id: str, index: int, status: RecordingStatus
) -> dict[str, Any]:
    """recording.json of sub-environment `index` of a vector session (its own spaces are the
    parent's spec's; it is one environment)."""
    info = copy.deepcopy(parent)
    info["session_id"] = session_id
    info["parent_session_id"] = str(parent.get("session_id", ""))
    info["env_index"] = index
    info.setdefault("spec", {})["num_envs"] = 1
    info["world_changes"] = []
    if status is RecordingStatus.RECORDING:
        info["status"], info["closed_at"] = status.value, None
    return info


def info_from_meta(meta: RecordingMeta) -> dict[str, Any]:
    """What recording.json can be rebuilt from meta.json alone (a recording made before it existed)."""
    info: dict[str, Any] = {
        "format": RECORDING_FORMAT,
        "session_id": meta.session_id,
        "env_id": meta.env_id,
        "kwargs": meta.kwargs,
        "spec": {
            "observation_space": meta.observation_space,
            "action_space": meta.action_space,
            "observation_labels": [],
            "metadata": {},
            "num_envs": 1 if meta.is_sub_session else int(meta.num_envs or 1),
            "endless": bool(meta.kwargs.get(ENDLESS) is True),  # meta.json keeps the kwargs as the instance had them
        },
        "started_at": meta.created_at,
        "closed_at": meta.closed_at,
        "status": meta.status.value,
        "world_changes": [],
    }
    if meta.parent_session_id is not None:
        info["parent_session_id"] = meta.parent_session_id
    if meta.env_index is not None:
        info["env_index"] = meta.env_index
    return info


def apply_close_to_info(info: dict[str, Any], meta: RecordingMeta) -> None:
    """Copy a close (status, closed_at) from meta.json into recording.json."""
    info["status"] = meta.status.value
    info["closed_at"] = meta.closed_at


def encode_info(info: dict[str, Any]) -> bytes:
    return encode_json(info)
