"""The episode a recording in progress is recording: what its part file holds so far.

An episode being recorded exists only as its part file (`writing.part_files`: the raw step
events the writer appends), in the recording's folder of a folder storage or in the recorder's
spool folder with S3 (`RecordingWriter.parts_root`/<id>/). It is in no meta.json until it ends.
This module reads it for the recordings API: how far it got (`OpenParts.progress`: its steps and
return so far, for the listing and `recordings.get`) and its arrays and frames so far
(`OpenParts.episode`, built as the writer builds a finished one: `build_episode`).

The reading side never writes to or repairs a part file (the writer owns it: it appends, and
cuts a torn tail only when it recovers). A part read while it is appended may end with a torn
record: it is left out until a later read finds it whole.

Cost: a part file is read incrementally (`PartTail`: each read parses only the bytes appended
since the last), so a long open episode is not parsed again on every request. Its arrays are
built again only when it grew, and at most once every `REBUILD_AFTER_S` (a replay refreshing
every few seconds asks for them several times a refresh); between builds the last build is
served. Built episodes are kept for the `MAX_BUILT` open episodes asked for last.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from platform_recorder.meta import RecordingMeta
from platform_recorder.reading.built_episodes import BuiltEpisode
from platform_recorder.writing.episodes import build_episode
from platform_recorder.writing.finishing import reset_request
from platform_recorder.writing.held_observations import HeldObservations
from platform_recorder.writing.lives import place_from_meta
from platform_recorder.writing.part_files import parse_records, part_files, part_path
from simulusion.bus.v1 import events_pb2
from simulusion.recorder.v1 import recorder_pb2 as rec

REBUILD_AFTER_S = 1.0
MAX_BUILT = 2
MAX_COUNTED = 256  # part files whose progress is kept (a few numbers each)


class PartTail:
    """One part file read as it grows: each `refresh` parses only what was appended since the
    last, up to its last whole record. Read only: the file is opened for reading, never written.

    Args:
        path: the part file.
        keep_events: keep the events (light: large observations stay in their records, `held`)
            to build the episode's arrays; else only count them.
    """

    def __init__(self, path: Path, keep_events: bool) -> None:
        self.path = path
        self.keep_events = keep_events
        self._identity: tuple[int, int] | None = None
        self._reset()

    def _reset(self) -> None:
        self.offset = 0  # the bytes read: whole records
        self.events: list[events_pb2.StepEvent] = []
        self.held = HeldObservations()
        self.steps = 0
        self.reward = 0.0
        self.first_seq: int | None = None
        self.last_seq = 0

    def refresh(self) -> bool:
        """Read what was appended since the last refresh; True when it held new events. A file
        replaced or cut shorter since (a recovery cuts a torn tail) is read again from its start.

        Raises:
            FileNotFoundError: the part file is gone (its episode was finished).
        """
        with open(self.path, "rb") as f:
            stat = os.fstat(f.fileno())
            identity = (stat.st_dev, stat.st_ino)
            if identity != self._identity or stat.st_size < self.offset:
                self._identity = identity
                self._reset()
            if stat.st_size == self.offset:
                return False
            f.seek(self.offset)
            data = f.read(stat.st_size - self.offset)
        events, used = parse_records(data, self.held if self.keep_events else None)
        self.offset += used
        for event in events:
            if event.WhichOneof("kind") == "step":
                self.steps += 1
                self.reward += event.step.result.reward
            seq = int(event.seq)
            self.first_seq = seq if self.first_seq is None else min(self.first_seq, seq)
            self.last_seq = max(self.last_seq, seq)
        if self.keep_events:
            self.events.extend(events)
        return bool(events)


@dataclass
class _Built:
    tail: PartTail
    arrays: BuiltEpisode | None = None
    summary: dict[str, Any] | None = None
    offset: int = -1  # the tail's offset its arrays were built at
    built_at: float = 0.0


class OpenParts:
    """The open episodes of the recordings whose part files are under `parts_root`
    (`<parts_root>/<recording id>/episode-NNNNNN.part`); None: none are served.

    Args:
        parts_root: the folder of the recordings' part folders.
        clock: monotonic seconds (tests pass their own).
    """

    def __init__(self, parts_root: Path | None, clock: Callable[[], float] = time.monotonic) -> None:
        self.parts_root = parts_root
        self._clock = clock
        self._counted: OrderedDict[Path, PartTail] = OrderedDict()
        self._built: OrderedDict[Path, _Built] = OrderedDict()
        self._count_lock = threading.Lock()
        self._build_lock = threading.Lock()
        self.builds = 0  # how many times an open episode's arrays were built (for tests)

    def open_indexes(self, meta: RecordingMeta) -> list[int]:
        """The indexes of the episodes `meta`'s recording is recording: its part files that
        meta.json does not list as finished (none once it is no longer recording)."""
        if self.parts_root is None or not meta.is_recording:
            return []
        listed = {e.get("index") for e in meta.episodes if isinstance(e, dict)}
        return [i for i in part_files(self.parts_root / meta.id) if i not in listed]

    def progress(self, meta: RecordingMeta) -> rec.OpenEpisode | None:
        """The last open episode of the recording and how far it got; None when it has none (or
        its part holds no whole event yet)."""
        indexes = self.open_indexes(meta)
        if not indexes or self.parts_root is None:
            return None
        index = indexes[-1]
        path = part_path(self.parts_root / meta.id, index)
        with self._count_lock:
            tail = self._counted.pop(path, None) or PartTail(path, keep_events=False)
            try:
                tail.refresh()
            except FileNotFoundError:
                return None  # finished meanwhile: the next listing has it in meta.json
            self._counted[path] = tail
            while len(self._counted) > MAX_COUNTED:
                self._counted.popitem(last=False)
        if tail.offset == 0:
            return None
        return rec.OpenEpisode(index=index, length=tail.steps, episode_return=tail.reward,
                               first_seq=tail.first_seq or 0, last_seq=tail.last_seq)

    def episode(
        self, meta: RecordingMeta, index: int, spec: Mapping[str, Any] | None
    ) -> tuple[dict[str, Any], BuiltEpisode] | None:
        """(its entry as meta.json would list it were it to end now, its arrays so far) of the
        open episode `index`; None when the recording has no such open episode (or its part holds
        no whole event yet).

        Args:
            spec: the session's spec as recording.json keeps it (labels: `state.<name>` columns).
        """
        if self.parts_root is None or index not in self.open_indexes(meta):
            return None
        path = part_path(self.parts_root / meta.id, index)
        where = f"recording {meta.id!r} episode {index} (in progress)"
        with self._build_lock:
            built = self._built.pop(path, None) or _Built(PartTail(path, keep_events=True))
            now = self._clock()
            if built.arrays is None or now - built.built_at >= REBUILD_AFTER_S:
                try:
                    built.tail.refresh()
                except FileNotFoundError:
                    return None  # finished meanwhile: its .npz serves it
                if built.tail.offset != built.offset:
                    built.arrays, built.summary = self._build(built.tail, where, meta, spec)
                    built.offset = built.tail.offset
                built.built_at = now
            self._built[path] = built
            while len(self._built) > MAX_BUILT:
                self._built.popitem(last=False)
        if built.arrays is None or built.summary is None or not built.tail.events:
            return None
        return {**built.summary, "index": index}, built.arrays

    def _build(
        self, tail: PartTail, where: str, meta: RecordingMeta, spec: Mapping[str, Any] | None
    ) -> tuple[BuiltEpisode, dict[str, Any]]:
        endless = bool((spec or {}).get("endless"))
        arrays, summary = build_episode(tail.events, where, spec=spec, life=place_from_meta(meta), held=tail.held,
                                        endless=endless)
        self.builds += 1
        summary.pop("agent_keys", None)  # meta.json lists them for the recording, not per episode
        summary.update(reset_request(min(tail.events, key=lambda e: e.seq)))  # its seed and reset options
        return BuiltEpisode(arrays, where), summary
