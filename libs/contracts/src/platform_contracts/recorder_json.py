"""The recorder's JSON files (meta.json, recording.json, comparison documents) as the messages of
simulusion.recorder.v1, and back: one codec, used by the recorder to answer and by the gateway to
give the REST routes the same JSON a recording holds.

A message field is the JSON member its `json_name` names when that was set in the .proto, else
the field's name (less a `_json` suffix). A field named `*_json` holds any JSON value as text
("" when the member is absent). `null_members` names the members present with null; `extra_json`
(a JSON object) keeps every member the message does not type and every member whose value does
not fit its field (a float where an integer is typed, a string where a bool is), as they were.
So `message_to_json(message_from_json(body, M()))` is `body` for any JSON object, non-finite
floats aside (written as the strings "nan", "inf", "-inf", as the recorder writes them).
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Mapping
from typing import Any, TypeVar

import numpy as np
from google.protobuf.descriptor import EnumDescriptor, FieldDescriptor
from google.protobuf.message import Message
from simulusion.recorder.v1 import recorder_pb2 as rec

M = TypeVar("M", bound=Message)

_NULLS = "null_members"
_EXTRA = "extra_json"
_INT64 = (-(2**63), 2**63 - 1)
_INTEGERS = frozenset({FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_UINT64,
                       FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_SINT64, FieldDescriptor.TYPE_SINT32})
_NON_FINITE = frozenset({"nan", "inf", "-inf"})


def strict(value: Any) -> Any:
    """`value` with its non-finite floats as the strings "nan", "inf", "-inf" (strict JSON)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict(v) for v in value]
    return value


def dumps(value: Any) -> str:
    """Compact strict JSON text of `value` (non-finite floats as strings)."""
    try:
        return json.dumps(value, allow_nan=False, separators=(",", ":"))
    except ValueError:
        return json.dumps(strict(value), allow_nan=False, separators=(",", ":"))


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _member(field: FieldDescriptor) -> str:
    if field.json_name != _camel(field.name):  # set in the .proto
        return field.json_name
    return field.name.removesuffix("_json")


def _is_json(field: FieldDescriptor) -> bool:
    return field.name.endswith("_json") and field.type == FieldDescriptor.TYPE_STRING


def _fields(descriptor: Any) -> list[tuple[str, FieldDescriptor]]:
    return [(_member(f), f) for f in descriptor.fields if f.name not in (_NULLS, _EXTRA)]


def _enum(field: FieldDescriptor) -> EnumDescriptor:
    assert field.enum_type is not None
    return field.enum_type


def _enum_prefix(field: FieldDescriptor) -> str:
    name = _enum(field).name
    snake = "".join(f"_{c}" if c.isupper() and i else c for i, c in enumerate(name)).upper()
    return snake + "_"


class _Unfit(Exception):
    """A JSON value that does not fit its field (it travels in extra_json)."""


def _scalar(field: FieldDescriptor, value: Any) -> Any:
    kind = field.type
    if kind == FieldDescriptor.TYPE_STRING:
        if isinstance(value, str):
            return value
    elif kind == FieldDescriptor.TYPE_BOOL:
        if isinstance(value, bool):
            return value
    elif kind in _INTEGERS:
        if isinstance(value, int) and not isinstance(value, bool) and _INT64[0] <= value <= _INT64[1]:
            return value
    elif kind == FieldDescriptor.TYPE_DOUBLE:
        if isinstance(value, float):
            return value
        if isinstance(value, str) and value in _NON_FINITE:
            return float(value)
    elif kind == FieldDescriptor.TYPE_ENUM:
        if isinstance(value, str) and value:
            found = _enum(field).values_by_name.get(_enum_prefix(field) + value.upper())
            if found is not None and found.number != 0:
                return found.number
    raise _Unfit


def message_from_json(body: Mapping[str, Any], message: M) -> M:
    """Fill `message` (a message with `null_members` and `extra_json`) from a JSON object; returns it."""
    kept: set[str] = set()
    nulls: list[str] = []
    for member, field in _fields(message.DESCRIPTOR):
        if member not in body:
            continue
        value = body[member]
        if _is_json(field):
            setattr(message, field.name, dumps(value))
            kept.add(member)
            continue
        if value is None:
            nulls.append(member)
            kept.add(member)
            continue
        try:
            if field.is_repeated:
                if not isinstance(value, list):
                    raise _Unfit
                if field.type == FieldDescriptor.TYPE_MESSAGE:
                    if not all(isinstance(v, dict) for v in value):
                        raise _Unfit
                    container = getattr(message, field.name)
                    for v in value:
                        message_from_json(v, container.add())
                else:
                    getattr(message, field.name).extend([_scalar(field, v) for v in value])
            else:
                setattr(message, field.name, _scalar(field, value))
        except _Unfit:
            continue
        kept.add(member)
    extra = {k: v for k, v in body.items() if k not in kept}
    if nulls:
        getattr(message, _NULLS).extend(nulls)
    if extra:
        setattr(message, _EXTRA, dumps(extra))
    return message


def _value(field: FieldDescriptor, value: Any) -> Any:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return message_to_json(value)
    if field.type == FieldDescriptor.TYPE_DOUBLE:
        return value if math.isfinite(value) else str(value)
    if field.type == FieldDescriptor.TYPE_ENUM:
        return _enum(field).values_by_number[value].name.removeprefix(_enum_prefix(field)).lower()
    return value


def message_to_json(message: Message) -> dict[str, Any]:
    """The JSON object `message_from_json` made `message` from."""
    out: dict[str, Any] = {}
    for member, field in _fields(message.DESCRIPTOR):
        value = getattr(message, field.name)
        if _is_json(field):
            if value:
                out[member] = json.loads(value)
        elif field.is_repeated:
            out[member] = [_value(field, v) for v in value]
        elif field.has_presence:
            if message.HasField(field.name):
                out[member] = _value(field, value)
        elif field.type != FieldDescriptor.TYPE_ENUM or value:
            out[member] = _value(field, value)
    for member in getattr(message, _NULLS):
        out[member] = None
    extra = getattr(message, _EXTRA)
    if extra:
        out.update(json.loads(extra))
    return out


def summary_to_json(summary: rec.RecordingSummary) -> dict[str, Any]:
    """A listing's entry as the REST API shows it: meta.json without `episodes`, plus
    `episode_count`, `step_count`, `total_return` (null without a return; a string when not
    finite), `saved_snapshots` ([{id, label, seq, created_at}]) and `open_episode` (the episode
    in progress, `open_episode_json`; null when none)."""
    out = message_to_json(summary.meta)
    out.pop("episodes", None)
    out["episode_count"] = summary.episode_count
    out["step_count"] = summary.step_count
    total = summary.total_return if summary.HasField("total_return") else None
    out["total_return"] = total if total is None or math.isfinite(total) else str(total)
    out["saved_snapshots"] = [
        {"id": s.id, "label": s.label, "seq": s.seq, "created_at": s.created_at} for s in summary.saved_snapshots
    ]
    out["open_episode"] = open_episode_json(summary.open_episode) if summary.HasField("open_episode") else None
    return out


def open_episode_json(episode: rec.OpenEpisode) -> dict[str, Any]:
    """The episode a recording in progress is recording, as the REST API shows it: `index`,
    `length` and `return` so far (a string when not finite), `first_seq`, `last_seq`."""
    total = episode.episode_return
    return {"index": episode.index, "length": episode.length, "return": total if math.isfinite(total) else str(total),
            "first_seq": episode.first_seq, "last_seq": episode.last_seq}


def recording_to_json(reply: rec.GetRecordingReply) -> dict[str, Any]:
    """One recording as the REST API shows it: meta.json with recording.json's `world_changes`
    (a list) and `spec` (an object, or null), and `open_episode` (the episode in progress,
    `open_episode_json`; null when none)."""
    out = message_to_json(reply.recording)
    out["world_changes"] = json.loads(reply.world_changes_json) if reply.world_changes_json else []
    out["spec"] = json.loads(reply.spec_json) if reply.spec_json else None
    out["open_episode"] = open_episode_json(reply.open_episode) if reply.HasField("open_episode") else None
    return out


def array_of(message: rec.Array) -> np.ndarray:
    """The NumPy array an `Array` message carries whole."""
    return np.frombuffer(message.data, dtype=np.dtype(message.dtype)).reshape(tuple(message.shape))


def array_json(array: np.ndarray) -> dict[str, Any]:
    """{"dtype", "shape", "data"}: data as nested lists; non-finite floats as strings ("nan",
    "inf"); bytes (e.g. JPEG frames) as base64 strings, with "encoding": "base64"."""
    out: dict[str, Any] = {"dtype": array.dtype.str, "shape": list(array.shape)}
    if array.dtype.kind == "S":
        flat = [base64.b64encode(bytes(x)).decode() for x in array.reshape(-1)]
        out["data"] = np.array(flat, dtype=object).reshape(array.shape).tolist() if array.ndim else flat[0]
        out["encoding"] = "base64"
    else:
        out["data"] = strict(array.tolist())
    return out
