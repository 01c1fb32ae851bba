"""Finishing an episode (its npz and meta entry) and applying a session's close to meta.json."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from simulusion.bus.v1 import events_pb2

from platform_recorder.episodes import build_episode, write_npz_atomic
from platform_recorder.meta import STATUS_CLOSED, STATUS_CRASHED, fsync_dir, iso_time
from platform_recorder.session_files import episode_stem, npz_path, part_path

log = logging.getLogger(__name__)


def finish_episode(
    session_dir: Path, index: int, events: Sequence[events_pb2.StepEvent], where: str
) -> tuple[dict[str, Any], bool]:
    """Write the npz of an episode (unless it exists); return its meta entry and whether an npz
    was renamed into place (not yet durable: the caller fsyncs the directory before meta.json
    names it).

    An episode whose arrays cannot be built keeps its events in `episode-NNNNNN.failed.part`.
    """
    where = f"{where} episode {index}"
    target = npz_path(session_dir, index)
    try:
        arrays, summary = build_episode(events, where)
    except Exception as exc:  # keep the data: a bad episode must not stop the recorder
        failed = session_dir / f"{episode_stem(index)}.failed.part"
        log.exception("%s: cannot build its arrays; the events stay in %s", where, failed.name)
        part_path(session_dir, index).replace(failed)
        fsync_dir(session_dir)
        entry = {
            "index": index,
            "file": None,
            "error": f"{type(exc).__name__}: {exc}",
            "first_seq": min(e.seq for e in events),
            "last_seq": max(e.seq for e in events),
        }
        return entry, False
    renamed = False
    if not target.exists():
        write_npz_atomic(target, arrays, sync_dir=False)
        renamed = True
    return {"index": index, "file": target.name, **summary}, renamed


def apply_close(meta: dict[str, Any], event: events_pb2.SessionEvent, last_seq: int, where: str) -> None:
    """Mark meta closed or crashed, with the reason, the log tail and the published last seq."""
    crashed = event.kind == events_pb2.SESSION_EVENT_KIND_CRASHED
    meta["status"] = STATUS_CRASHED if crashed else STATUS_CLOSED
    meta["reason"] = event.reason
    if event.log_tail:
        meta["log_tail"] = event.log_tail
    meta["closed_at"] = iso_time(event.time)
    meta["published_last_seq"] = event.last_seq
    if event.last_seq > last_seq:
        log.error(
            "%s: closed after publishing seq %d but only seq %d was recorded", where, event.last_seq, last_seq
        )
