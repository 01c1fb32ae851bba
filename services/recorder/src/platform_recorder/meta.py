"""meta.json of a recording (its contents; written through the storage, see recording_objects),
and the atomic local file write (temp + fsync + rename + directory fsync)."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

from platform_contracts.json_values import space_to_json
from simulusion.bus.v1 import events_pb2

from platform_recorder.storage import ObjectNotFoundError, Storage

META_FILE = "meta.json"
STATUS_RECORDING = "recording"
STATUS_CLOSED = "closed"
STATUS_CRASHED = "crashed"


def jsonable(obj: Any) -> Any:
    """Replace non-finite floats by strings so the result is strict JSON (a walk of every value:
    `strict_json` first tries without it)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, dict):
        return {k: jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    return obj


def encode_json(value: dict[str, Any]) -> bytes:
    """meta.json's and recording.json's bytes: compact strict JSON (json's C encoder; `indent`
    would use the pure-Python one, ~20x slower on the spaces of image observations), with
    non-finite floats (rare: a Box bound, a return) written as strings."""
    try:
        return json.dumps(value, allow_nan=False, separators=(",", ":")).encode()
    except ValueError:
        return json.dumps(jsonable(value), allow_nan=False, separators=(",", ":")).encode()


encode_meta = encode_json


def strict_json(value: Any) -> Any:
    """`value`, or when it holds non-finite floats a copy with those as strings (`jsonable`)."""
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:
        return jsonable(value)
    return value


def meta_key(session_id: str) -> str:
    return f"{session_id}/{META_FILE}"


def read_meta_object(storage: Storage, session_id: str) -> dict[str, Any] | None:
    """A recording's meta.json straight from the storage (the writer's own state: no manifest
    check), or None when it has none."""
    try:
        return json.loads(storage.get(meta_key(session_id)))
    except ObjectNotFoundError:
        return None


def iso_time(unix_seconds: float | None = None) -> str:
    t = datetime.now(UTC) if not unix_seconds else datetime.fromtimestamp(unix_seconds, UTC)
    return t.isoformat().replace("+00:00", "Z")


def new_meta(event: events_pb2.SessionEvent) -> dict[str, Any]:
    """meta.json of a recording that starts with this STARTED event."""
    try:
        kwargs = json.loads(event.kwargs_json) if event.kwargs_json else {}
    except json.JSONDecodeError:
        kwargs = {"_unparsed": event.kwargs_json}
    spec = event.spec
    # Sanitized once here (a Box space has infinite bounds) so that encode_meta's fast path holds.
    return strict_json({
        "id": event.session_id,
        "session_id": event.session_id,
        "env_id": event.env_id or spec.env_id,
        "kwargs": kwargs,
        "host_id": event.host_id,
        "observation_space": space_to_json(spec.observation_space)
        if spec.HasField("observation_space")
        else None,
        "action_space": space_to_json(spec.action_space) if spec.HasField("action_space") else None,
        "num_envs": max(1, spec.num_envs),  # > 1: a vector session, recorded per sub-session
        "created_at": iso_time(event.time),
        "status": STATUS_RECORDING,
        "reason": "",
        "episodes": [],
        "agent_keys": [],
        "last_seq": 0,
        "missing_seqs": [],
        "orphan_seqs": [],
    })
