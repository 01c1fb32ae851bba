"""Finishing an episode (its npz and meta entry) and applying a session's close to meta.json."""

from __future__ import annotations

import logging
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from platform_contracts.values import json_from_datamap
from platform_recorder.layout import episode_stem, npz_name
from platform_recorder.meta import RecordingMeta, RecordingStatus, iso_time, strict_json
from platform_recorder.storage.durable_files import fsync_dir
from platform_recorder.writing.episodes import build_episode
from platform_recorder.writing.held_observations import HeldObservations
from platform_recorder.writing.life_columns import LIFE_START, episode_life_start
from platform_recorder.writing.lives import LifePlace
from platform_recorder.writing.npz_files import encode_npz
from platform_recorder.writing.part_files import part_path
from platform_recorder.writing.recording_objects import RecordingObjects
from simulusion.bus.v1 import events_pb2

log = logging.getLogger(__name__)


@dataclass
class PreparedEpisode:
    """An episode's finished form, before anything is stored (`prepare_episode`).

    Attributes:
        index: its file index.
        entry: its meta entry.
        npz: the bytes of its npz file; None when its arrays could not be built (its entry's
            `error` says why, and `trace` holds the traceback's text).
    """

    index: int
    entry: dict[str, Any]
    npz: bytes | memoryview | None = None
    trace: str = ""


def prepare_episode(
    index: int,
    events: Sequence[events_pb2.StepEvent],
    where: str,
    spec: Mapping[str, Any] | None = None,
    life: LifePlace | None = None,
    endless: bool = False,
    held: HeldObservations | None = None,
) -> PreparedEpisode:
    """An episode's npz bytes and meta entry, built from its events; nothing is written (so it
    may run in another process: `finish_pool`). An episode whose arrays cannot be built gets an
    entry naming the error, and no npz.

    `spec`: recording.json's (observation labels). `life`: the session's place in its life
    (`life_start`, thinned frames). `endless`: the file is one of an endless run's (its entry
    names its first `episode`, its `restarts` in place, and `continued` when it begins in the
    middle of an episode). `held`: the observation data of events read back light.
    """
    ordered = sorted(events, key=lambda e: e.seq)
    extra = _entry_extras(ordered, life, endless)
    try:
        arrays, summary = build_episode(ordered, f"{where} episode {index}", spec, life, held, endless)
        npz = encode_npz(arrays)
    except Exception as exc:  # noqa: BLE001 - kept with its traceback: a bad episode must not stop the recorder
        entry = {
            "index": index,
            "file": None,
            "error": f"{type(exc).__name__}: {exc}",
            "length": sum(1 for e in ordered if e.WhichOneof("kind") == "step"),
            "first_seq": ordered[0].seq,
            "last_seq": ordered[-1].seq,
            **extra,
        }
        return PreparedEpisode(index, entry, None, traceback.format_exc())
    return PreparedEpisode(index, {"index": index, "file": npz_name(index), **summary, **extra}, npz)


def store_episode(objects: RecordingObjects, local_dir: Path, prepared: PreparedEpisode, where: str) -> dict[str, Any]:
    """Write a prepared episode's npz into the storage (unless it is there); return its meta
    entry. In a folder the npz is not yet durable: `objects.save` makes it so before meta.json
    names it. One that could not be built keeps its events in `episode-NNNNNN.failed.part`
    (beside its part file: the local folder)."""
    index = prepared.index
    if prepared.npz is None:
        failed = local_dir / f"{episode_stem(index)}.failed.part"
        log.error("%s episode %d: cannot build its arrays; the events stay in %s\n%s", where, index, failed,
                  prepared.trace.rstrip())
        part_path(local_dir, index).replace(failed)
        fsync_dir(local_dir)
    elif not objects.has_episode(index):
        objects.put_episode(index, prepared.npz)
    return prepared.entry


def _entry_extras(
    ordered: Sequence[events_pb2.StepEvent], life: LifePlace | None, endless: bool
) -> dict[str, Any]:
    """The meta entry's fields every entry gets, built or not: the reset's seed and options, and
    those of lives and endless runs."""
    extra: dict[str, Any] = reset_request(ordered[0] if ordered else None)
    if life is not None:
        extra[LIFE_START] = episode_life_start(life.offset, ordered)
    if endless:
        first = ordered[0]
        extra["episode"] = int(first.episode)
        # its other resets are restarts in place (any other begins a file: endless_files)
        extra["restarts"] = sum(1 for e in ordered[1:] if e.WhichOneof("kind") == "reset")
        if first.WhichOneof("kind") == "step" and first.episode_step > 1:
            extra["continued"] = True
    return extra


def reset_request(first: events_pb2.StepEvent | None) -> dict[str, Any]:
    """`seed` (an int, or None) and `reset_options` (an object, or None) of the reset that started
    the episode, as it was asked; both None for an episode that started otherwise (a restore, an
    auto-reset or endless restart, or mid-episode)."""
    if first is None or first.WhichOneof("kind") != "reset":
        return {"seed": None, "reset_options": None}
    seed = int(first.reset_seed) if first.HasField("reset_seed") else None
    options = strict_json(json_from_datamap(first.reset_options)) if first.HasField("reset_options") else None
    return {"seed": seed, "reset_options": options}


def apply_close(meta: RecordingMeta, event: events_pb2.SessionEvent, last_seq: int, where: str) -> None:
    """Mark meta closed or crashed, with the reason, the log tail and the published last seq.

    The first close wins: a later one (the env host's, late, after the broker's for a lost env
    host) changes nothing but a published last seq that was not known. An event's `last_seq` 0
    says nothing was known to be published (the broker's close of a session whose env host is
    gone): the recording ends with what was recorded, `published_last_seq` left out, and says
    whether steps answered after its `last_seq` may be missing (`tail_may_be_missing`: not for a
    durable session, whose every answered step was stored).

    A vector session's close counts sub-environment 0's events in `last_seq` and each
    sub-environment's in `sub_last_seqs`: its own recording (which holds none) keeps `last_seq`
    unchecked, and a sub-environment's recording takes its own entry (checked against what it
    recorded), or, from an env host that sent none, only whether `last_seq` was known (0: the
    tail may be missing, as above).
    """
    if meta.is_sub_session:
        _close_sub_session(meta, event, last_seq, where)
        return
    if not meta.is_recording:
        if event.last_seq and not meta.published_last_seq:
            meta.published_last_seq = event.last_seq
            if (meta.num_envs or 1) <= 1:
                _check_published(event.last_seq, last_seq, where)
        return
    crashed = event.kind == events_pb2.SESSION_EVENT_KIND_CRASHED
    meta.status = RecordingStatus.CRASHED if crashed else RecordingStatus.CLOSED
    meta.reason = event.reason
    if event.log_tail:
        meta.log_tail = event.log_tail
    meta.closed_at = iso_time(event.time)
    if event.last_seq:
        meta.published_last_seq = event.last_seq
        if (meta.num_envs or 1) <= 1:  # a vector session's steps are in its sub-sessions' recordings
            _check_published(event.last_seq, last_seq, where)
    else:  # ended without its env host: what it published last is unknown (see RecordingMeta)
        meta.tail_may_be_missing = not meta.durable


def _close_sub_session(meta: RecordingMeta, event: events_pb2.SessionEvent, last_seq: int, where: str) -> None:
    """`apply_close` for a sub-environment's recording: how its vector session ended, and the
    last seq published for it (the event's `sub_last_seqs` entry of its index)."""
    index = meta.env_index if meta.env_index is not None else -1
    published = event.sub_last_seqs[index] if 0 <= index < len(event.sub_last_seqs) else 0
    if not meta.is_recording:
        if published and not meta.published_last_seq:
            meta.published_last_seq = published
            _check_published(published, last_seq, where)
        return
    meta.status = RecordingStatus.CRASHED if event.kind == events_pb2.SESSION_EVENT_KIND_CRASHED else RecordingStatus.CLOSED
    meta.reason = event.reason
    if event.log_tail:
        meta.log_tail = event.log_tail
    meta.closed_at = iso_time(event.time)
    if published:
        meta.published_last_seq = published
        _check_published(published, last_seq, where)
    elif not event.last_seq:
        meta.tail_may_be_missing = not meta.durable


def _check_published(published: int, last_seq: int, where: str) -> None:
    if published > last_seq:
        log.error("%s: closed after publishing seq %d but only seq %d was recorded", where, published, last_seq)
