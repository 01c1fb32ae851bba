"""recording.json's `world_changes`: the world changes applied during the session.

The env host keeps the instance's `ForRecording` in the step events (resets and steps; an
auto-reset step's changes are on its step event): each applied change as a JSON object, the
timeline entry plus "index" (its place in the timeline) and "session_step" (the session's steps
before it). The recorder adds where it happened in the recording, "seq", "episode" and
"episode_step" (the event's), and keeps the list in seq order, each (seq, index) once: a
redelivered event adds nothing, a change met again after a restore (another seq) is listed
again.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any

from simulusion.bus.v1 import events_pb2

log = logging.getLogger(__name__)

WORLD_CHANGES = "world_changes"


def event_world_changes(event: events_pb2.StepEvent, where: str = "") -> list[dict[str, Any]]:
    """The world changes a step event carries, each with the event's seq, episode and episode_step."""
    kind = event.WhichOneof("kind")
    if kind == "step":
        result = event.step.result
        texts = result.for_recording.world_changes_json if result.HasField("for_recording") else ()
    elif kind == "reset":
        texts = event.reset.for_recording.world_changes_json if event.reset.HasField("for_recording") else ()
    else:
        return []
    changes: list[dict[str, Any]] = []
    for text in texts:
        try:
            change = json.loads(text)
        except json.JSONDecodeError as exc:
            log.error("%s: step event seq %d carries a world change that is not JSON (%s): %r", where, event.seq,
                      exc, text[:200])
            continue
        if not isinstance(change, dict):
            log.error("%s: step event seq %d carries a world change that is not a JSON object: %r", where,
                      event.seq, text[:200])
            continue
        change.update(seq=int(event.seq), episode=int(event.episode), episode_step=int(event.episode_step))
        changes.append(change)
    return changes


def _key(change: dict[str, Any]) -> tuple[int, int]:
    seq, index = change.get("seq"), change.get("index")
    return (seq if isinstance(seq, int) else 0), (index if isinstance(index, int) else -1)


def add_world_changes(info: dict[str, Any], changes: Iterable[dict[str, Any]]) -> bool:
    """Add `changes` to recording.json's `world_changes` (`info`), in seq order, leaving out those
    it lists already; whether any was added."""
    listed: list[dict[str, Any]] = info.setdefault(WORLD_CHANGES, [])
    known = {_key(change) for change in listed}
    added = False
    for change in changes:
        key = _key(change)
        if key in known:
            continue
        known.add(key)
        if listed and _key(listed[-1]) > key:  # a late event: put it in its place
            place = next(i for i, other in enumerate(listed) if _key(other) > key)
            listed.insert(place, change)
        else:
            listed.append(change)
        added = True
    return added
