"""One recorded session's files and state: exactly-once appends, episode ends, crash recovery.

Durable state is only what is on disk: meta.json, the finished `episode-*.npz`, the open
`episode-*.part` files (and `orphans.part`). `Recording.load` derives everything else from it:
the last seq written, the seqs still missing, which episodes are open and which must be finished.

Per batch the writer calls `append` for each event (in order), then `sync` (write the batch's
records, one write per run of events bound for the same part file, and fsync the touched part
files: from here the events are durable and may be acked), then `settle` (finish ended episodes:
npz; then, at most every `meta_interval` seconds unless something urgent changed, meta.json
listing them, and only then delete their parts; every step is idempotent, so a crash anywhere in
it is repaired by `load`). Until meta.json lists a finished episode its part file stays: the
events stay durable where `load` finds them.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from simulusion.bus.v1 import events_pb2

from platform_recorder.episodes import START_KINDS
from platform_recorder.finishing import apply_close, finish_episode
from platform_recorder.meta import STATUS_RECORDING, fsync_dir, read_meta_file, write_meta
from platform_recorder.open_episodes import OpenEpisode, scan_parts
from platform_recorder.session_files import (
    ORPHANS_PART,
    PartWriter,
    frame_record,
    npz_path,
    part_path,
    read_part,
)

log = logging.getLogger(__name__)

# A jump in seq larger than this is logged but its missing seqs are not tracked one by one.
MAX_TRACKED_GAP = 100_000
WRITTEN = "written"
DUPLICATE = "duplicate"
ORPHAN = "orphan"
KNOWN_KINDS = (*START_KINDS, "step")


class Recording:
    """The state of one recorded session; build it with `Recording.load`."""

    def __init__(self, session_dir: Path, meta: dict[str, Any], meta_interval: float = 0.0) -> None:
        self.dir = session_dir
        self.meta = meta
        self.meta_interval = meta_interval
        self.session_id = str(meta.get("session_id", session_dir.name))
        self.env_id = str(meta.get("env_id", ""))
        self.last_seq = int(meta.get("last_seq", 0))
        self.missing: set[int] = {int(s) for s in meta.get("missing_seqs", [])}
        self.finished: set[int] = {int(e["index"]) for e in meta.get("episodes", [])}
        self.open: dict[int, OpenEpisode] = {}
        self._to_finish: set[int] = set()
        self._close: events_pb2.SessionEvent | None = None
        self._orphans: PartWriter | None = None
        self._touched: set[PartWriter] = set()
        self._runs: list[tuple[PartWriter, list[bytes]]] = []  # this batch's records, in order
        self._unlink_when_listed: set[int] = set()  # finished episodes whose part files remain
        self._dir_dirty = False  # npz renames not yet made durable by a directory fsync
        self._meta_dirty = False  # meta.json is behind: written at the next due settle
        self._meta_urgent = False  # ... at the next settle whatever the interval
        self._meta_written_at = time.monotonic()

    @property
    def where(self) -> str:
        return f"session {self.session_id} env {self.env_id}"

    @property
    def quiet(self) -> bool:
        """Nothing pending (all synced and settled): the state can be dropped and reloaded later."""
        return (
            not self._to_finish and self._close is None and not self._touched and not self._meta_dirty
        )

    @property
    def meta_pending(self) -> bool:
        """meta.json is behind the finished episodes (see `meta_due`)."""
        return self._meta_dirty

    # ---------------------------------------------------------------- recovery

    @classmethod
    def load(cls, session_dir: Path, meta_interval: float = 0.0) -> Recording | None:
        """The recording in `session_dir` as left on disk (None without a meta.json).

        Cuts torn tails of part files, and schedules (for the next `settle`) the episodes a crash
        left unfinished: those whose npz exists or that ended (`settle` also finishes those that a
        later episode follows, once no seq is missing).
        """
        meta = read_meta_file(session_dir)
        if meta is None:
            return None
        rec = cls(session_dir, meta, meta_interval)
        scan = scan_parts(session_dir, rec.finished)
        found = scan.found
        rec.open = scan.open
        rec._to_finish = scan.to_finish
        missing_before = set(rec.missing)
        top = max(found, default=0)
        if top > rec.last_seq:
            if top - rec.last_seq <= MAX_TRACKED_GAP:
                rec.missing.update(range(rec.last_seq + 1, top + 1))
            rec.last_seq = top
        rec.missing -= found
        rec._meta_dirty = rec.missing != missing_before or rec.last_seq != meta.get("last_seq")
        rec._meta_urgent = True  # what recovery finishes is listed at once
        if rec.missing:
            log.warning(
                "%s: seqs %s are missing so far (a redelivery may bring them)",
                rec.where,
                _ranges(rec.missing),
            )
        return rec

    # ---------------------------------------------------------------- appending

    def append(self, event: events_pb2.StepEvent, data: bytes | None = None) -> str:
        """Take one step event for writing (not yet durable: see `sync`); WRITTEN, DUPLICATE or ORPHAN.

        Args:
            event: the parsed event.
            data: its serialized form as received (written as is); None: serialize `event`.
        """
        seq = event.seq
        late = seq in self.missing
        if seq == 0:
            log.error(
                "%s: step event without seq (episode %d step %d), kept in %s",
                self.where,
                event.episode,
                event.episode_step,
                ORPHANS_PART,
            )
            self._orphan(event, data)
            return ORPHAN
        if seq <= self.last_seq and not late:
            return DUPLICATE
        if seq > self.last_seq + 1:
            log.error(
                "GAP in %s: step events %d..%d are missing before seq %d (episode %d step %d); "
                "writing it anyway",
                self.where,
                self.last_seq + 1,
                seq - 1,
                seq,
                event.episode,
                event.episode_step,
            )
            if seq - self.last_seq <= MAX_TRACKED_GAP:
                self.missing.update(range(self.last_seq + 1, seq))
            self._meta_dirty = self._meta_urgent = True
        if late:
            log.warning(
                "%s: late step event seq %d (episode %d step %d) arrived after seq %d",
                self.where,
                seq,
                event.episode,
                event.episode_step,
                self.last_seq,
            )
            self.missing.discard(seq)
            self._meta_dirty = self._meta_urgent = True
        self.last_seq = max(self.last_seq, seq)
        kind = event.WhichOneof("kind")
        index = event.episode
        state = self.open.get(index)
        problem = ""
        if index in self.finished or (state is None and npz_path(self.dir, index).exists()):
            problem = f"its episode {index} is already finished"
        elif kind in START_KINDS and state is not None and state.has_start:
            problem = f"episode {index} already started"
        elif kind == "step" and state is not None and state.ended:
            problem = f"episode {index} already ended"
        elif kind not in KNOWN_KINDS:
            problem = "it has no kind"
        if problem:
            log.error(
                "%s: step event seq %d (episode %d step %d) kept in %s: %s",
                self.where,
                seq,
                index,
                event.episode_step,
                ORPHANS_PART,
                problem,
            )
            self._orphan(event, data)
            return ORPHAN
        if kind in START_KINDS and not late:
            self._to_finish.update(i for i in self.open if i < index)
        if state is None:
            state = self.open[index] = OpenEpisode(index, PartWriter(part_path(self.dir, index)))
            if kind == "step":
                log.warning(
                    "%s: episode %d starts at seq %d without a reset/restore event", self.where, index, seq
                )
        state.keep(event, self._write(state.writer, event, data))
        if kind in START_KINDS:
            state.has_start = True
        elif event.step.result.terminated or event.step.result.truncated:
            state.ended = True
            self._to_finish.add(index)
        return WRITTEN

    def _write(self, writer: PartWriter, event: events_pb2.StepEvent, data: bytes | None) -> int:
        """Queue a record for `writer` (written by `sync`); its size."""
        record = frame_record(event.SerializeToString() if data is None else data)
        runs = self._runs
        if runs and runs[-1][0] is writer:
            runs[-1][1].append(record)
        else:
            runs.append((writer, [record]))
            self._touched.add(writer)
        return len(record)

    def _orphan(self, event: events_pb2.StepEvent, data: bytes | None) -> None:
        if self._orphans is None:
            self._orphans = PartWriter(self.dir / ORPHANS_PART)
        self._write(self._orphans, event, data)
        self.meta.setdefault("orphan_seqs", []).append(event.seq)
        self._meta_dirty = self._meta_urgent = True

    def request_close(self, event: events_pb2.SessionEvent) -> None:
        """Finish every open episode and mark the recording closed/crashed at the next settle."""
        self._close = event

    # ---------------------------------------------------------------- durability

    def sync(self) -> None:
        """Write the records taken since the last sync and fsync their part files: they are durable."""
        for writer, records in self._runs:
            writer.write(b"".join(records))
        self._runs.clear()
        created = False
        for writer in self._touched:
            created |= writer.sync()
        self._touched.clear()
        if created:
            fsync_dir(self.dir)

    def settle(self, now: float | None = None, force: bool = False) -> None:
        """Finish ended episodes and apply a close; write meta.json when it is due (see `meta_due`)
        or `force`d."""
        self.sync()  # no-op after the writer's sync: nothing must be finished from unwritten records
        closing = self._close is not None or self.meta.get("status", STATUS_RECORDING) != STATUS_RECORDING
        if closing:
            self._to_finish.update(self.open)
        elif len(self.open) > 1 and not self.missing:
            # A later episode has started (after a crash, its reset may be all that reached disk):
            # the earlier ones are finished once no seq is missing, as their late events could be.
            newest = max(self.open)
            self._to_finish.update(i for i in self.open if i < newest)
        finished: list[tuple[int, dict[str, Any] | None]] = [
            (index, self._finish_files(index)) for index in sorted(self._to_finish)
        ]
        self._to_finish.clear()
        if self._close is not None:
            self._apply_close(self._close)
            self._close = None
        if finished:
            self._list(finished)
        if self._meta_dirty and (force or closing or self.meta_due(time.monotonic() if now is None else now)):
            self.write_meta()

    def meta_due(self, now: float) -> bool:
        """meta.json is behind and must be written now: something other than finished episodes
        changed (a gap, an orphan, a close...), or `meta_interval` passed since the last write."""
        return self._meta_dirty and (self._meta_urgent or now - self._meta_written_at >= self.meta_interval)

    def _list(self, finished: list[tuple[int, dict[str, Any] | None]]) -> None:
        """Put finished episodes in the in-memory meta; their parts go once meta.json is written."""
        episodes: list[dict[str, Any]] = self.meta.setdefault("episodes", [])
        keys = set(self.meta.get("agent_keys", []))
        for index, entry in finished:
            self._unlink_when_listed.add(index)
            if entry is None:
                continue
            self.finished.add(index)
            keys.update(entry.pop("agent_keys", []))
            if episodes and int(episodes[-1]["index"]) >= index:  # out of order or again: rebuild
                by_index = {int(e["index"]): e for e in episodes}
                by_index[index] = entry
                episodes[:] = [by_index[i] for i in sorted(by_index)]
            else:
                episodes.append(entry)
        self.meta["agent_keys"] = sorted(keys)
        self._meta_dirty = True

    def write_meta(self) -> None:
        """Write meta.json (after making the npz renames it names durable), then delete the part
        files of the episodes it lists. Those deletes need no fsync: a part that comes back after
        a crash is finished again by `load` + `settle`, idempotently."""
        self.meta["last_seq"] = self.last_seq
        self.meta["missing_seqs"] = sorted(self.missing)
        if self._dir_dirty:
            fsync_dir(self.dir)
            self._dir_dirty = False
        write_meta(self.dir, self.meta)
        self._meta_dirty = self._meta_urgent = False
        self._meta_written_at = time.monotonic()
        for index in sorted(self._unlink_when_listed):
            part_path(self.dir, index).unlink(missing_ok=True)
        self._unlink_when_listed.clear()

    def _finish_files(self, index: int) -> dict[str, Any] | None:
        """Write the npz of an episode (unless it exists) and return its meta entry."""
        state = self.open.pop(index, None)
        if state is not None:
            state.writer.close()
            self._touched.discard(state.writer)
        events = state.events if state is not None and state.events is not None else None
        if events is None:
            events = read_part(part_path(self.dir, index))
        if not events:
            return None
        entry, renamed = finish_episode(self.dir, index, events, self.where)
        self._dir_dirty |= renamed
        return entry

    def _apply_close(self, event: events_pb2.SessionEvent) -> None:
        apply_close(self.meta, event, self.last_seq, self.where)
        self._meta_dirty = self._meta_urgent = True

    def close_files(self) -> None:
        for state in self.open.values():
            state.writer.close()
        if self._orphans is not None:
            self._orphans.close()
            self._orphans = None


def _ranges(seqs: set[int]) -> str:
    """1,2,3,7 -> '1..3, 7' for log lines."""
    out: list[str] = []
    for seq in sorted(seqs):
        if out and out[-1].split("..")[-1] == str(seq - 1):
            out[-1] = f"{out[-1].split('..')[0]}..{seq}"
        else:
            out.append(str(seq))
    return ", ".join(out[:20]) + (" ..." if len(out) > 20 else "")
