"""Lives: named recordings that go on across sessions and restarts, indexed by `lives/<name>.json`.

Each session of a life records into its own recording (`<session_id>/`, as any session); the
life's index in the recordings storage puts them in order and counts the life's steps:

    {"format": 1, "name": "robot-1", "frame_every": 0, "max_frames": 20000, "total_steps": 51234,
     "sessions": [{"session_id", "first_step", "steps", "status"}], "updated_at"}

At a session's STARTED event the recorder joins it to the life (`join_life`: its `first_step` is
the life's `total_steps`, its life offset); at its CLOSED/CRASHED event it sets its step count
and status (`close_in_life`). Both are keyed by session id, so a redelivered event changes
nothing, and each index write is atomic (`Storage.put_atomic`). `total_steps` is the largest
`first_step + steps`. The life's thinning settings are those of its first session.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from platform_contracts.names import LIFE_NAME, LIFE_NAME_RULE

from platform_recorder.errors import InvalidLifeNameError
from platform_recorder.layout import LIVES_DIR
from platform_recorder.meta import RecordingMeta, RecordingStatus, iso_time
from platform_recorder.storage.interface import ObjectNotFoundError, Storage

log = logging.getLogger(__name__)

LIFE_FORMAT = 1
def check_life_name(name: str) -> str:
    """`name` if it can name a life (`platform_contracts.names.LIFE_NAME`); else InvalidLifeNameError."""
    if not isinstance(name, str) or not LIFE_NAME.fullmatch(name):
        raise InvalidLifeNameError(f"invalid life name {name!r}: use {LIFE_NAME_RULE} (e.g. robot-1)")
    return name


def life_key(name: str) -> str:
    return f"{LIVES_DIR}/{check_life_name(name)}.json"


@dataclass(frozen=True)
class LifePlace:
    """A session's place in its life.

    Attributes:
        name: the life.
        offset: the life step at which the session begins (the life's steps before it).
        position: the session's number in the life (0: its first session).
        frame_every, max_frames: the life's thinning settings (its first session's).
    """

    name: str
    offset: int
    position: int
    frame_every: int
    max_frames: int


def read_life(storage: Storage, name: str) -> dict[str, Any] | None:
    """The index of life `name`, or None when it has none yet.

    An unreadable index (never written so by the recorder: edited by hand) must not stop the
    recorder: it is kept as `lives/<name>.json.unreadable`, logged, and the life starts again.
    """
    key = life_key(name)
    try:
        data = storage.get(key)
    except ObjectNotFoundError:
        return None
    try:
        body = json.loads(data)
        if isinstance(body, dict) and isinstance(body.get("sessions"), list):
            return body
    except ValueError:
        pass
    storage.put_atomic(key + ".unreadable", data)
    log.error("%s in %s is not a life index: kept as %s.unreadable; the life starts again from step 0",
              key, storage.description, key)
    return None


def new_life(name: str, frame_every: int, max_frames: int) -> dict[str, Any]:
    return {"format": LIFE_FORMAT, "name": name, "frame_every": frame_every, "max_frames": max_frames,
            "total_steps": 0, "sessions": []}


def write_life(storage: Storage, life: dict[str, Any]) -> None:
    """Replace the life's index (atomically), its total recounted."""
    life["total_steps"] = total_steps(life)
    life["updated_at"] = iso_time()
    storage.put_atomic(life_key(life["name"]), json.dumps(life, indent=1).encode())


def total_steps(life: dict[str, Any]) -> int:
    return max((int(s["first_step"]) + int(s["steps"]) for s in life["sessions"]), default=0)


def _entry(life: dict[str, Any], session_id: str) -> tuple[int, dict[str, Any]] | None:
    for position, entry in enumerate(life["sessions"]):
        if entry.get("session_id") == session_id:
            return position, entry
    return None


def _place(life: dict[str, Any], position: int, entry: dict[str, Any]) -> LifePlace:
    return LifePlace(str(life["name"]), int(entry["first_step"]), position,
                     int(life.get("frame_every") or 0), int(life.get("max_frames") or 0))


def join_life(
    storage: Storage,
    name: str,
    session_id: str,
    frame_every: int,
    max_frames: int,
    steps_so_far: Callable[[str], int | None],
) -> LifePlace:
    """Add `session_id` at the end of life `name` (made now if new); its place. A session already in
    the life (a redelivered STARTED event) keeps its place.

    Args:
        frame_every, max_frames: the session's settings; a life keeps its first session's (a later
            session asking for other non-zero ones is logged).
        steps_so_far: the steps recorded so far by an earlier session of the life that never closed
            (its env host died without a CLOSED event), or None when unknown: counted before this one.
    """
    life = read_life(storage, name) or new_life(name, frame_every, max_frames)
    found = _entry(life, session_id)
    if found is not None:
        return _place(life, *found)
    asked = {"frame_every": frame_every, "max_frames": max_frames}
    differs = {k: v for k, v in asked.items() if v and v != int(life.get(k) or 0)}
    if life["sessions"] and differs:
        log.warning(
            "life %s: session %s asks for %s but the life keeps its first settings (frame_every=%s, "
            "max_frames=%s)", name, session_id, differs, life.get("frame_every"), life.get("max_frames"),
        )
    for entry in life["sessions"]:
        if entry.get("status") != RecordingStatus.RECORDING.value:
            continue
        steps = steps_so_far(str(entry["session_id"]))
        if steps is not None and steps > int(entry["steps"]):
            entry["steps"] = steps
        log.warning(
            "life %s: session %s never closed; its %d steps so far come before session %s",
            name, entry["session_id"], int(entry["steps"]), session_id,
        )
    entry = {"session_id": session_id, "first_step": total_steps(life), "steps": 0,
             "status": RecordingStatus.RECORDING.value}
    life["sessions"].append(entry)
    write_life(storage, life)
    return _place(life, len(life["sessions"]) - 1, entry)


def close_in_life(
    storage: Storage, place: LifePlace, session_id: str, steps: int, status: RecordingStatus
) -> None:
    """Set the step count and status of `session_id` in its life (idempotent: keyed by session id;
    nothing is written when nothing changes)."""
    life = read_life(storage, place.name)
    if life is None:  # the index was deleted meanwhile: start it again from this session
        log.warning("life %s has no index in %s; made again from session %s", place.name,
                    storage.description, session_id)
        life = new_life(place.name, place.frame_every, place.max_frames)
    found = _entry(life, session_id)
    if found is None:
        entry = {"session_id": session_id, "first_step": place.offset, "steps": 0,
                 "status": RecordingStatus.RECORDING.value}
        life["sessions"].append(entry)
    else:
        entry = found[1]
    if entry["steps"] == steps and entry["status"] == status.value and life.get("total_steps") == total_steps(life):
        return
    entry["steps"], entry["status"] = steps, status.value
    write_life(storage, life)


def set_life_place(meta: RecordingMeta, place: LifePlace) -> None:
    """Write the session's place in its life into its meta.json."""
    meta.life, meta.life_offset, meta.life_session = place.name, place.offset, place.position
    meta.frame_every, meta.max_frames = place.frame_every, place.max_frames


def place_from_meta(meta: RecordingMeta) -> LifePlace | None:
    """The life place meta.json records, or None for a session of no life."""
    if not meta.life:
        return None
    return LifePlace(meta.life, int(meta.life_offset or 0), int(meta.life_session or 0),
                     int(meta.frame_every or 0), int(meta.max_frames or 0))
