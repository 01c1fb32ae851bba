"""The episode browser's listing: every finished episode of the recordings (one team's when
asked), filtered by environment, outcome and success, sorted, and paged by offset.

Blocks (it reads each recording's meta.json): call it in a thread from asyncio code.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from platform_contracts.recorder_json import message_from_json
from platform_contracts.teams import owning_team
from platform_recorder.errors import InvalidRecordingIdError, InvalidRequestError, RecorderError, RecordingNotFoundError
from platform_recorder.layout import NOT_RECORDINGS
from platform_recorder.meta import RecordingMeta
from platform_recorder.reading.recording_store import RecordingStore
from simulusion.recorder.v1 import recorder_pb2 as rec

log = logging.getLogger(__name__)

DEFAULT_LIMIT = 100
MAX_LIMIT = 500
SORTS = ("newest", "oldest", "return", "-return", "length", "-length")


@dataclass(frozen=True)
class _Found:
    meta: RecordingMeta
    entry: dict[str, Any]


def _number(value: Any) -> float | None:
    """An entry's length or return as a float; None where it has none (non-finite returns are
    written as "nan" or "inf": NaN counts as none)."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def _recording_metas(store: RecordingStore, env_id: str | None, team: str | None) -> Iterator[RecordingMeta]:
    for name in store.storage.children(""):
        if name in NOT_RECORDINGS or name.startswith("."):
            continue
        try:
            meta = store.read_meta(name)
        except (InvalidRecordingIdError, RecordingNotFoundError):
            continue  # not a recording's folder, or one whose meta.json is not written yet
        except (OSError, ValueError, RecorderError) as exc:
            log.warning("recording %s is unreadable, its episodes not listed: %s", name, exc)
            continue
        if env_id is not None and meta.env_id != env_id:
            continue
        if team is not None and owning_team(meta.team) != team:
            continue
        yield meta




def _sort_key(sort: str) -> tuple[Callable[[_Found], Any], bool]:
    """The key and direction of a sort; episodes without the sorted value go last either way."""
    def by_time(found: _Found) -> Any:
        return (str(found.meta.created_at or ""), found.meta.id, -int(found.entry.get("index") or 0))

    def by(member: str, sign: float) -> Callable[[_Found], Any]:
        def key(found: _Found) -> Any:
            value = _number(found.entry.get(member))
            return (value is None, sign * value if value is not None else 0.0, found.meta.id,
                    int(found.entry.get("index") or 0))
        return key

    keys: dict[str, tuple[Callable[[_Found], Any], bool]] = {
        "newest": (by_time, True), "oldest": (by_time, False),
        "return": (by("return", 1.0), False), "-return": (by("return", -1.0), False),
        "length": (by("length", 1.0), False), "-length": (by("length", -1.0), False),
    }
    if sort not in keys:
        raise InvalidRequestError(f"'sort' is {sort!r}: one of {', '.join(SORTS)}")
    return keys[sort]


def list_episodes(store: RecordingStore, request: rec.ListEpisodesRequest) -> rec.ListEpisodesReply:
    """The page of episodes `request` asks for, with how many match and the outcomes met (of
    the episodes that match but for the outcome).

    Raises:
        InvalidRequestError: an unknown sort, a negative offset or limit, or a limit over MAX_LIMIT.
    """
    key, newest_first = _sort_key(request.sort or "newest")
    if request.offset < 0:
        raise InvalidRequestError(f"'offset' is {request.offset}: 0 or more")
    if not 0 <= request.limit <= MAX_LIMIT:
        raise InvalidRequestError(f"'limit' is {request.limit}: 1 to {MAX_LIMIT} (0: {DEFAULT_LIMIT})")
    outcome = request.outcome or None
    is_success = request.is_success if request.HasField("is_success") else None
    found: list[_Found] = []
    outcomes: set[str] = set()
    for meta in _recording_metas(store, request.env_id or None, request.team or None):
        for entry in meta.episodes:
            if not isinstance(entry, dict) or (is_success is not None and entry.get("is_success") is not is_success):
                continue
            if isinstance(entry.get("outcome"), str):
                outcomes.add(entry["outcome"])  # before the outcome filter: the filter's choices
            if outcome is None or entry.get("outcome") == outcome:
                found.append(_Found(meta, entry))
    found.sort(key=key, reverse=newest_first)
    page = found[request.offset:request.offset + (request.limit or DEFAULT_LIMIT)]
    reply = rec.ListEpisodesReply(total=len(found), outcomes=sorted(outcomes))
    for item in page:
        listed = reply.episodes.add(recording_id=item.meta.id, session_id=item.meta.session_id)
        if item.meta.env_id is not None:
            listed.env_id = item.meta.env_id
        if item.meta.team is not None:
            listed.team = item.meta.team
        if item.meta.created_at is not None:
            listed.created_at = item.meta.created_at
        message_from_json(item.entry, listed.episode)
    return reply
