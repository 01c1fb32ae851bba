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


def encode_json(value: Any) -> bytes:
    """meta.json's and recording.json's bytes: compact strict JSON (json's C encoder; `indent`
    would use the pure-Python one, ~20x slower on the spaces of image observations), with
    non-finite floats (rare: a Box bound, a return) written as strings."""
    try:
        return json.dumps(value, allow_nan=False, separators=(",", ":")).encode()
    except ValueError:
        return json.dumps(jsonable(value), allow_nan=False, separators=(",", ":")).encode()


# meta.json members that never change once a recording started and may be large (a Box whose
# bounds differ element by element is written out in full): encoded once per recording.
_UNCHANGING_KEYS = frozenset({"observation_space", "action_space", "kwargs"})


class MetaEncoder:
    """meta.json's bytes for one recording, rewritten every second or so while it records: its
    unchanging members (see `_UNCHANGING_KEYS`) are encoded once, the rest each time (the same
    bytes as `encode_json`)."""

    def __init__(self) -> None:
        self._encoded: dict[str, tuple[Any, bytes]] = {}  # key -> (the value encoded, its JSON)

    def encode(self, meta: dict[str, Any]) -> bytes:
        members: list[bytes] = []
        for key, value in meta.items():
            name = json.dumps(key).encode()
            if key in _UNCHANGING_KEYS:
                cached = self._encoded.get(key)
                if cached is None or cached[0] is not value:  # a new value (after a reload): again
                    cached = self._encoded[key] = (value, encode_json(value))
                members.append(name + b":" + cached[1])
            else:
                members.append(name + b":" + encode_json(value))
        return b"{" + b",".join(members) + b"}"


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
    # Sanitized once here so that encode_json's fast path holds. Only the kwargs can hold
    # non-finite floats: space_to_json writes those as strings, and walking a large space's
    # bounds again would cost more than the rest of a recording's start.
    return {
        "id": event.session_id,
        "session_id": event.session_id,
        "env_id": event.env_id or spec.env_id,
        "kwargs": strict_json(kwargs),
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
    }
