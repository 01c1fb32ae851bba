"""Sub-session recordings: one per sub-environment of a vector session.

A vector session `<id>` (num_envs > 1) publishes its steps in StepEventBatch messages whose
events name sub-session ids `<id>-<i>` (`platform_contracts.subjects.sub_session_id`). A
sub-session has no lifecycle events of its own: its recording is made when its first event
arrives, with meta.json taken from the parent's recording (created by the parent's STARTED
event: env id, kwargs, spaces, host, start time, and its status if it already closed), plus
`parent_session_id` and `env_index`. The parent's CLOSED/CRASHED event closes its
sub-sessions' recordings too.

Telling a sub-session id from a session id: the parent is the part before the last
`-<digits>` (digits in canonical form: `7`, not `07`). An id is taken as a sub-session id only
when it has no recording of its own and that parent has one that is not itself a
sub-session's, so a session whose own id ends in `-<digits>` is never mistaken for one once
its STARTED event was seen (broker ids, `s-<12 hex>`, cannot be confused anyway).
"""

from __future__ import annotations

import os
import re

from platform_recorder.meta import RecordingMeta
from platform_recorder.storage.interface import Storage
from platform_recorder.storage.opening import as_storage

_SUB_ID = re.compile(r"^(?P<parent>.+)-(?P<index>0|[1-9][0-9]*)$")


def split_sub_session_id(session_id: str) -> tuple[str, int] | None:
    """`"<parent>-<i>"` -> (parent, i); None when the id does not have that form."""
    match = _SUB_ID.match(session_id)
    if match is None:
        return None
    return match.group("parent"), int(match.group("index"))


def sub_session_meta(parent: RecordingMeta, session_id: str, index: int) -> RecordingMeta:
    """meta.json of sub-session `session_id` (sub-environment `index`) of the parent's recording:
    what it takes from the parent's (env id, kwargs, host, spaces, start time, durable) and, when the
    parent already closed (events arriving after its close: recorded, and the recording closed at
    once), how it ended."""
    meta = RecordingMeta(
        id=session_id,
        session_id=session_id,
        env_id=parent.env_id,
        team=parent.team,
        kwargs=parent.kwargs,
        host_id=parent.host_id,
        observation_space=parent.observation_space,
        action_space=parent.action_space,
        created_at=parent.created_at,
        parent_session_id=parent.session_id,
        env_index=index,
        durable=parent.durable,
    )
    if not parent.is_recording:
        meta.status, meta.reason = parent.status, parent.reason
        meta.log_tail, meta.closed_at = parent.log_tail, parent.closed_at
        meta.tail_may_be_missing = parent.tail_may_be_missing
    return meta


def sub_session_ids(storage: Storage | os.PathLike[str] | str, parent_id: str) -> list[str]:
    """The ids of the recordings in `storage` named like sub-sessions of `parent_id`, by index."""
    found: list[tuple[int, str]] = []
    for name in as_storage(storage).children("", name_prefix=f"{parent_id}-"):
        split = split_sub_session_id(name)
        if split is not None and split[0] == parent_id:
            found.append((split[1], name))
    return [name for _, name in sorted(found)]
