"""meta.json of a recording, typed (`RecordingMeta`, its status a `RecordingStatus`), and the
encoding of the recorder's JSON files.

The members are those docs/recording-format.md names; `RecordingMeta.to_json` writes them (and
any member an other version wrote, kept in `extra`) and `from_json` reads any meta.json the
recorder ever wrote: a member an older one did not write takes its default (no `agent_keys`: none).
On the bus a meta is the message simulusion.recorder.v1.RecordingMeta (`to_message`,
`from_message`: platform_contracts.recorder_json maps the JSON members onto its fields).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from platform_contracts.json_values import space_to_json
from platform_contracts.recorder_json import dumps, message_from_json, message_to_json, strict
from platform_contracts.teams import owning_team
from simulusion.bus.v1 import events_pb2
from simulusion.recorder.v1 import recorder_pb2 as rec

from platform_recorder.errors import InvalidMetaError


class RecordingStatus(StrEnum):
    """Where a recording stands: still being written, or ended (by a close or a crash)."""

    RECORDING = "recording"
    CLOSED = "closed"
    CRASHED = "crashed"


# Members left out of meta.json while they are None (written only for some recordings, or once
# closed); the others are always written (`observation_space: null` when the spec has none).
_WRITTEN_WHEN_SET = frozenset({
    "num_envs", "parent_session_id", "env_index", "log_tail", "closed_at", "published_last_seq",
    "life", "life_offset", "life_session", "frame_every", "max_frames", "updated_at", "team",
    "durable", "tail_may_be_missing",
})


@dataclass(eq=False)
class RecordingMeta:
    """The content of a recording's meta.json (see docs/recording-format.md, "meta.json").

    Attributes:
        id, session_id: the recording's id (a vector session's sub-environment: `<parent>-<i>`).
        team: the team that owns it, its session's (PLATFORM_MODE=managed; "default" otherwise);
            None in a meta.json written before teams: the default team's (`owning_team`).
        num_envs: n for a vector session (its own recording holds no episodes); None in a
            sub-environment's recording (which is one environment).
        parent_session_id, env_index: a sub-environment's vector session and its index.
        status: RECORDING until the session's close (CLOSED) or crash (CRASHED).
        reason, log_tail, closed_at, published_last_seq: how it ended (set at the close).
        durable: True when its session answered each step only once its event was stored
            (`SessionOptions.durable`); None otherwise.
        tail_may_be_missing: set when the session ended without its env host (its publisher died,
            what it published last is unknown): True when steps its clients were answered for
            after `last_seq` may be missing, False for a durable session (none were).
        life, life_offset, life_session, frame_every, max_frames: its place in a life.
        episodes: the finished episodes' entries, by index (JSON objects: `index`, `file`, ...).
        extra: members this version does not know, kept as they were read.
    """

    id: str
    session_id: str
    env_id: str = ""
    team: str | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)
    host_id: str | None = ""
    observation_space: dict[str, Any] | None = None
    action_space: dict[str, Any] | None = None
    num_envs: int | None = None
    created_at: str | None = None
    parent_session_id: str | None = None
    env_index: int | None = None
    status: RecordingStatus = RecordingStatus.RECORDING
    reason: str = ""
    log_tail: str | None = None
    closed_at: str | None = None
    published_last_seq: int | None = None
    durable: bool | None = None
    tail_may_be_missing: bool | None = None
    life: str | None = None
    life_offset: int | None = None
    life_session: int | None = None
    frame_every: int | None = None
    max_frames: int | None = None
    episodes: list[dict[str, Any]] = field(default_factory=list)
    agent_keys: list[str] = field(default_factory=list)
    last_seq: int = 0
    missing_seqs: list[int] = field(default_factory=list)
    orphan_seqs: list[int] = field(default_factory=list)
    updated_at: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def is_recording(self) -> bool:
        """Still being written (not yet closed or crashed)."""
        return self.status is RecordingStatus.RECORDING

    @property
    def is_sub_session(self) -> bool:
        """The recording of one sub-environment of a vector session."""
        return bool(self.parent_session_id)

    def to_json(self) -> dict[str, Any]:
        """meta.json's members (the lists and objects are this meta's own, not copies)."""
        out: dict[str, Any] = {}
        for name in _MEMBERS:
            value = getattr(self, name)
            if value is None and name in _WRITTEN_WHEN_SET:
                continue
            out[name] = value
        out["status"] = self.status.value
        for name, value in self.extra.items():
            out.setdefault(name, value)
        return out

    def to_message(self) -> rec.RecordingMeta:
        """The meta as the recorder's replies carry it (every member of `to_json`, exactly)."""
        return message_from_json(self.to_json(), rec.RecordingMeta())

    @classmethod
    def from_message(cls, message: rec.RecordingMeta) -> RecordingMeta:
        """The meta a `to_message` message carries.

        Raises:
            InvalidMetaError: as `from_json`.
        """
        return cls.from_json(message_to_json(message))

    def summary(self, open_episode: rec.OpenEpisode | None = None) -> rec.RecordingSummary:
        """A listing's entry: meta.json's members without the episode list, with its length as
        `episode_count`, the sum of the episodes' lengths as `step_count` and of their returns as
        `total_return` (unset without a finished episode's return), and the episode in progress
        (`open_episode`: its steps so far, in no meta.json yet; see reading.open_parts) when one is
        given. No saved snapshots."""
        body = self.to_json()
        del body["episodes"]
        returns = [_number(e.get("return")) for e in self.episodes if isinstance(e, dict)]
        known = [r for r in returns if r is not None]
        summary = rec.RecordingSummary(
            meta=message_from_json(body, rec.RecordingMeta()),
            episode_count=len(self.episodes),
            step_count=int(sum(_number(e.get("length")) or 0 for e in self.episodes if isinstance(e, dict))),
        )
        if known:
            summary.total_return = float(sum(known))
        if open_episode is not None:
            summary.open_episode.CopyFrom(open_episode)
        return summary

    @classmethod
    def from_json(cls, body: Any) -> RecordingMeta:
        """The meta of a decoded meta.json.

        Raises:
            InvalidMetaError: not a JSON object, no id, or a status this version does not know.
        """
        if not isinstance(body, dict):
            raise InvalidMetaError(f"meta.json is not a JSON object but {type(body).__name__}")
        known = {name: body[name] for name in _MEMBERS if name in body}
        extra = {name: value for name, value in body.items() if name not in _MEMBER_SET}
        recording_id = known.get("id") or known.get("session_id")
        if not isinstance(recording_id, str) or not recording_id:
            raise InvalidMetaError("meta.json has no recording id ('id', 'session_id')")
        known["id"] = str(known.get("id") or recording_id)
        known["session_id"] = str(known.get("session_id") or recording_id)
        status = known.get("status", RecordingStatus.RECORDING.value)
        try:
            known["status"] = RecordingStatus(status)
        except ValueError:
            statuses = ", ".join(s.value for s in RecordingStatus)
            raise InvalidMetaError(f"meta.json has the status {status!r}; known: {statuses}") from None
        for name in _LISTS:  # null in a hand-edited file: none
            if known.get(name) is None:
                known.pop(name, None)
        if known.get("kwargs") is None:
            known.pop("kwargs", None)
        return cls(**known, extra=extra)

    @classmethod
    def from_started(cls, event: events_pb2.SessionEvent) -> RecordingMeta:
        """The meta of a recording that starts with this STARTED event."""
        try:
            kwargs = json.loads(event.env_kwargs_json) if event.env_kwargs_json else {}
        except json.JSONDecodeError:
            kwargs = {"_unparsed": event.env_kwargs_json}
        spec = event.spec
        # Sanitized once here so that encode_json's fast path holds. Only the kwargs can hold
        # non-finite floats: space_to_json writes those as strings, and walking a large space's
        # bounds again would cost more than the rest of a recording's start.
        return cls(
            id=event.session_id,
            session_id=event.session_id,
            env_id=event.options.env_id or spec.env_id,
            team=owning_team(event.options.team),
            kwargs=strict_json(kwargs),
            host_id=event.host_id,
            observation_space=space_to_json(spec.observation_space)
            if spec.HasField("observation_space")
            else None,
            action_space=space_to_json(spec.action_space) if spec.HasField("action_space") else None,
            num_envs=max(1, spec.num_envs),  # > 1: a vector session, recorded per sub-session
            created_at=iso_time(event.time),
            durable=True if event.options.durable and event.options.record else None,
        )


def _number(value: Any) -> Any:
    """An episode entry's length or return as a number: non-finite returns are written as
    strings ("nan", "inf"); None for what is not a number (a failed episode has no return)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


_MEMBERS = tuple(f.name for f in fields(RecordingMeta) if f.name != "extra")
_MEMBER_SET = frozenset(_MEMBERS)
_LISTS = ("episodes", "agent_keys", "missing_seqs", "orphan_seqs")


def encode_json(value: Any) -> bytes:
    """meta.json's and recording.json's bytes: compact strict JSON (json's C encoder; `indent`
    would use the pure-Python one, ~20x slower on the spaces of image observations), with
    non-finite floats (rare: a Box bound, a return) written as strings."""
    return dumps(value).encode()


# meta.json members that never change once a recording started and may be large (a Box whose
# bounds differ element by element is written out in full): encoded once per recording.
_UNCHANGING_KEYS = frozenset({"observation_space", "action_space", "kwargs"})


class MetaEncoder:
    """meta.json's bytes for one recording, rewritten every second or so while it records: its
    unchanging members (see `_UNCHANGING_KEYS`) are encoded once, the rest each time (the same
    bytes as `encode_json` of `RecordingMeta.to_json`)."""

    def __init__(self) -> None:
        self._encoded: dict[str, tuple[Any, bytes]] = {}  # key -> (the value encoded, its JSON)

    def encode(self, meta: RecordingMeta | dict[str, Any]) -> bytes:
        members: list[bytes] = []
        body = meta.to_json() if isinstance(meta, RecordingMeta) else meta
        for key, value in body.items():
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
    """`value`, or when it holds non-finite floats a copy with those as strings (`strict`)."""
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:
        return strict(value)
    return value


def iso_time(unix_seconds: float | None = None) -> str:
    t = datetime.now(UTC) if not unix_seconds else datetime.fromtimestamp(unix_seconds, UTC)
    return t.isoformat().replace("+00:00", "Z")
