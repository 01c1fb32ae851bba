"""Apply batches of session-stream messages to the recordings storage (synchronous, one thread).

Messages: `SessionEvent`s (`.lifecycle`), `StepEvent`s (`.step`) and `StepEventBatch`es (`.steps`:
a hold's steps, or a vector session's sub-environments' steps). Every step event, single or in a
batch, goes to the recording of the session it names, exactly once by (session id, seq); events
of a vector session's sub-sessions make their recordings (see platform_recorder.writing.sub_sessions).
"""

from __future__ import annotations

import logging
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from google.protobuf.message import DecodeError
from platform_contracts import subjects
from platform_contracts.step_batches import EntryBytes, EntryForm, NotABatchError, decompress_event, entries
from platform_contracts.log_lines import session_fields
from platform_recorder.errors import InvalidLifeNameError, InvalidRecordingIdError
from platform_recorder.layout import META_FILE, NOT_RECORDINGS, check_recording_id
from platform_recorder.meta import RecordingMeta
from platform_recorder.storage.durable_files import SyncGroup
from platform_recorder.storage.interface import Storage
from platform_recorder.storage.opening import as_storage
from platform_recorder.writing.held_observations import light_split_event
from platform_recorder.writing.lives import LifePlace, check_life_name, join_life, set_life_place
from platform_recorder.writing.finish_pool import FinishPool
from platform_recorder.writing.meta_batches import MetaBatch
from platform_recorder.writing.part_deleter import PartDeleter
from platform_recorder.writing.recording import Recording
from platform_recorder.writing.recording_json import new_recording_info, sub_session_info
from platform_recorder.writing.recording_objects import RecordingObjects
from platform_recorder.writing.sub_sessions import split_sub_session_id, sub_session_ids, sub_session_meta
from simulusion.bus.v1 import events_pb2

log = logging.getLogger(__name__)

_CLOSING = (events_pb2.SESSION_EVENT_KIND_CLOSED, events_pb2.SESSION_EVENT_KIND_CRASHED)
# Ids known to have no recording (events of unrecorded sessions), so each costs no storage read.
MAX_ABSENT = 4096


class RecordingWriter:
    """The only writer of recordings in `storage`.

    `process(batch)` returns once every event of the batch is durable (or deliberately ignored),
    so the caller may then ack the whole batch. After an exception, call `reset()` and let the
    batch be redelivered: state is reloaded from the storage and the part files, and duplicates
    are recognised by seq.

    Args:
        storage: the recordings storage (a path: a folder storage of it).
        max_cached: sessions whose state is kept in memory beyond those with work pending.
        meta_interval: seconds a recording's meta.json may lag behind its finished episodes
            (their events are durable in part files meanwhile); 0: written with every batch.
            While any does, call `flush_due()` now and then (`process` does it too).
        spool: the local folder of the part files (`<spool>/<id>/`); required unless `storage`
            is a local folder (`Storage.local_root`), whose recording folders then hold them.
        background_deletes: listed episodes' part files are deleted on a thread of their own
            (`part_deleter`; the service's way), not before `process` returns.
        finish_pool: finished episodes of busy batches are prepared in a worker process
            (`finish_pool`; the service's way) and listed by a later `process` or `flush_due`,
            not before `process` returns.
    """

    def __init__(
        self,
        storage: Storage | Path | str,
        max_cached: int = 256,
        meta_interval: float = 0.0,
        spool: Path | None = None,
        background_deletes: bool = False,
        finish_pool: bool = False,
    ) -> None:
        self.storage = as_storage(storage)
        if spool is None:
            if self.storage.local_root is None:
                raise ValueError(f"a spool folder for part files is required with {self.storage.description}")
            spool = self.storage.local_root
        self.parts_root = Path(spool).absolute()
        self.spooled = self.storage.local_root != self.parts_root  # not the recordings' own folders
        self.max_cached = max_cached
        self.meta_interval = meta_interval
        self._sessions: OrderedDict[str, Recording] = OrderedDict()
        self._absent: OrderedDict[str, None] = OrderedDict()
        self._deleter = PartDeleter() if background_deletes else None
        self._finish_pool = FinishPool() if finish_pool else None

    def start_finish_pool(self) -> None:
        """Start the finishing worker now rather than with the first busy batch (`finish_pool`)."""
        if self._finish_pool is not None:
            self._finish_pool.start()

    def local_dir(self, session_id: str) -> Path:
        """The folder of a recording's part files."""
        return self.parts_root / session_id

    def _load(self, session_id: str) -> Recording | None:
        self.wait_deletes()  # what is read back is what the deletes asked so far left
        rec = Recording.load(self.storage, session_id, self.local_dir(session_id), self.meta_interval, self.spooled)
        if rec is not None:
            rec.deleter, rec.finish_pool = self._deleter, self._finish_pool
        return rec

    def _new(self, session_id: str, meta: RecordingMeta, info: dict[str, Any]) -> Recording:
        """A new recording: its meta.json and recording.json are written now."""
        objects = RecordingObjects(self.storage, session_id)
        objects.save(meta=meta, info=info)
        self._absent.pop(session_id, None)
        rec = Recording(objects, self.local_dir(session_id), meta, info, self.meta_interval, self.spooled)
        rec.deleter, rec.finish_pool = self._deleter, self._finish_pool
        self._sessions[session_id] = rec
        return rec

    def recover(self, mine: Callable[[RecordingMeta], bool] = lambda meta: True) -> int:
        """Finish what a crash left behind in every recording with part files that is `mine`
        (a partition's, when several recorders share the spool); count them."""
        self.parts_root.mkdir(parents=True, exist_ok=True)
        self.reset()  # another recorder may have written these recordings since they were read
        count = 0
        for folder in sorted(p for p in self.parts_root.iterdir() if p.is_dir()):
            if not any(folder.glob("*.part")):
                continue
            try:
                check_recording_id(folder.name)
            except InvalidRecordingIdError:
                log.warning("%s: not a recording's folder, left alone", folder)
                continue
            rec = self._load(folder.name)
            if rec is None:
                log.warning("%s: part files of a recording that has no meta.json in %s, left alone",
                            folder, self.storage.description)
                continue
            if not mine(rec.meta):
                rec.close_files()
                continue
            rec.settle()
            self._sessions[rec.session_id] = rec
            count += 1
        self._evict()
        return count

    def process(self, messages: Sequence[tuple[str, bytes]]) -> Counter[str]:
        """Apply `(subject, data)` messages in order; make them durable. Counts outcomes."""
        counts: Counter[str] = Counter()
        touched: dict[str, Recording] = {}
        for subject, data in messages:
            kind = subjects.session_event_kind(subject)
            try:
                if kind == "step":
                    event = events_pb2.StepEvent.FromString(data)
                    counts[self._step(event, EntryBytes(data, EntryForm.PLAIN), len(data), subjects.session_of_subject(subject), touched)] += 1
                elif kind == "steps":  # gathered steps, a hold's, or one of each sub-environment
                    fallback = subjects.session_of_subject(subject)
                    for event, entry, size in _batch_events(data):
                        counts[self._step(event, entry, size, fallback, touched)] += 1
                elif kind == "lifecycle":
                    counts[self._lifecycle(events_pb2.SessionEvent.FromString(data), touched)] += 1
                else:
                    counts["ignored"] += 1
            except (DecodeError, NotABatchError) as exc:
                log.error("unreadable message on %s (%d bytes), skipped: %s", subject, len(data), exc)
                counts["unreadable"] += 1
        durable = SyncGroup()
        for rec in touched.values():
            rec.sync(durable)
        durable.commit()
        now = time.monotonic()
        metas = MetaBatch()
        for rec in touched.values():
            rec.settle(now, metas=metas)
        if self._finish_pool is not None:
            self._finish_pool.dispatch()
        self.flush_due(now, metas)
        return counts

    @property
    def meta_pending(self) -> bool:
        """Some recording's meta.json lags behind its finished episodes (see `flush_due`)."""
        return any(rec.meta_pending for rec in self._sessions.values())

    def flush_due(self, now: float | None = None, metas: MetaBatch | None = None) -> None:
        """Write the meta.json files that lagged `meta_interval` or more (and `metas`), together;
        drop idle state. When one is due, every lagging one is written with it: the recordings of
        a vector session then share one batch an interval rather than each its own."""
        now = time.monotonic() if now is None else now
        metas = MetaBatch() if metas is None else metas
        if self._finish_pool is not None:
            for rec in self._sessions.values():
                rec.collect_prepared()
        lagging = [rec for rec in self._sessions.values() if rec.meta_dirty]
        if len(metas) or any(rec.meta_due(now) for rec in lagging):
            for rec in lagging:
                metas.add(rec)
        metas.write(self.storage)
        self._evict()

    def flush(self) -> None:
        """Write every lagging meta.json now (before stopping), with every episode being prepared."""
        metas = MetaBatch()
        for rec in self._sessions.values():
            if rec.preparing:
                rec.settle(force=True)  # lists what is being prepared
            if rec.meta_dirty:
                metas.add(rec)
        metas.write(self.storage)

    def _step(
        self, event: events_pb2.StepEvent, entry: EntryBytes | None, size: int, fallback: str,
        touched: dict[str, Recording],
    ) -> str:
        """Take one step event for its session's recording (`fallback`: the subject's session, for an
        event that names none; `entry`: its bytes as they came, None to serialize it again; `size`:
        its serialized size); the `Appended` outcome ("written", "duplicate", "orphan"), or "ignored"
        (no recording)."""
        session_id = event.session_id or fallback
        rec = self._get(session_id) or self._start_sub_session(session_id, touched)
        if rec is None:
            return "ignored"
        touched[rec.session_id] = rec
        if entry is None:
            return rec.append(event).outcome
        return rec.append(event, entry.data, entry.form, size).outcome

    def _start_sub_session(self, session_id: str, touched: dict[str, Recording]) -> Recording | None:
        """The recording of sub-session `session_id` of a recorded vector session, made now from its
        parent's meta.json (see platform_recorder.writing.sub_sessions); None when it is not one."""
        split = split_sub_session_id(session_id)
        if split is None or session_id in NOT_RECORDINGS:
            return None
        parent_id, index = split
        parent = self._get(parent_id)
        if parent is None or parent.meta.is_sub_session:
            return None
        num_envs = int(parent.meta.num_envs or 0)
        if num_envs > 1 and index >= num_envs:
            log.warning("%s: events of sub-environment %d of %d: recorded anyway", parent.where, index, num_envs)
        meta = sub_session_meta(parent.meta, session_id, index)
        info = sub_session_info(parent.info, session_id, index, meta.status)
        rec = self._new(session_id, meta, info)
        log.info("recording sub-environment %d of session %s", index, parent_id)
        touched[session_id] = rec
        return rec

    def _close(self, event: events_pb2.SessionEvent, touched: dict[str, Recording]) -> str:
        """Close the session's recording and those of its sub-sessions (a vector session)."""
        rec = self._get(event.session_id)
        if rec is None:
            return "ignored"
        rec.request_close(event)
        touched[rec.session_id] = rec
        if rec.meta.is_sub_session:
            return "closed"
        for sub_id in sub_session_ids(self.storage, rec.session_id):
            sub = self._get(sub_id)
            if sub is not None and sub.meta.parent_session_id == rec.session_id:
                sub.request_close(event)  # its last_seq counts the parent's events (finishing.apply_close)
                touched[sub_id] = sub
        return "closed"

    def _lifecycle(self, event: events_pb2.SessionEvent, touched: dict[str, Recording]) -> str:
        if event.kind == events_pb2.SESSION_EVENT_KIND_STARTED:
            if not event.options.record:
                return "ignored"
            if event.options.life:
                # A life's earlier session may have closed in this batch: its close (and its step
                # count in the life's index) is applied first, as the stream ordered them.
                for rec in touched.values():
                    rec.sync()
                    rec.settle()
            return self._start(event, touched)
        if event.kind in _CLOSING:
            return self._close(event, touched)
        return "ignored"

    def _start(self, event: events_pb2.SessionEvent, touched: dict[str, Recording]) -> str:
        try:
            check_recording_id(event.session_id)
            if event.session_id in NOT_RECORDINGS:
                raise InvalidRecordingIdError(f"{event.session_id!r} is a folder of the recorder's own")
        except InvalidRecordingIdError as exc:
            log.error("session %s env %s cannot be recorded: %s", event.session_id, event.options.env_id, exc,
                      extra=session_fields(event.session_id, event.options.team))
            return "ignored"
        if event.session_id in self._sessions or self.storage.exists(f"{event.session_id}/{META_FILE}"):
            return "duplicate"
        meta = RecordingMeta.from_started(event)
        info = new_recording_info(event, meta.kwargs)
        place = self._join_life(event)
        if place is not None:
            set_life_place(meta, place)
            info.update(life=place.name, life_offset=place.offset)
        rec = self._new(event.session_id, meta, info)
        log.info("recording session %s env %s%s", event.session_id, meta.env_id,
                 f" into life {place.name} from step {place.offset}" if place is not None else "",
                 extra=session_fields(event.session_id, event.options.team))
        touched[event.session_id] = rec
        return "started"

    def _join_life(self, event: events_pb2.SessionEvent) -> LifePlace | None:
        """Add a starting session to its life's index (platform_recorder.writing.lives); its place there.
        None: no life (or one it cannot join: logged, and the session is recorded on its own)."""
        options = event.options
        if not options.life:
            return None
        where = f"session {event.session_id} env {options.env_id}"
        try:
            name = check_life_name(options.life)
        except InvalidLifeNameError as exc:
            log.error("%s is recorded without its life: %s", where, exc)
            return None
        if max(1, event.spec.num_envs) > 1:
            log.error("%s is recorded without life %s: a life records one environment, this session "
                      "runs %d", where, name, event.spec.num_envs)
            return None
        return join_life(self.storage, name, event.session_id, options.frame_every, options.max_frames,
                         self._steps_so_far)

    def _steps_so_far(self, session_id: str) -> int | None:
        """The steps recorded so far of a session (one of a life that never closed), or None."""
        rec = self._get(session_id)
        return rec.session_steps() if rec is not None else None

    def _get(self, session_id: str) -> Recording | None:
        rec = self._sessions.get(session_id)
        if rec is not None:
            self._sessions.move_to_end(session_id)
            return rec
        if session_id in self._absent:
            return None
        try:
            check_recording_id(session_id)
        except InvalidRecordingIdError:
            return None
        rec = self._load(session_id)
        if rec is None:
            self._absent[session_id] = None
            while len(self._absent) > MAX_ABSENT:
                self._absent.popitem(last=False)
            return None
        self._sessions[session_id] = rec
        rec.settle()  # finish what a crash left, before new events arrive
        return rec

    def _evict(self) -> None:
        """Drop the state of idle sessions beyond `max_cached` and of closed ones (it is on disk)."""
        for session_id in list(self._sessions):
            rec = self._sessions[session_id]
            closed = not rec.meta.is_recording
            if rec.quiet and (closed or len(self._sessions) > self.max_cached):
                rec.close_files()
                del self._sessions[session_id]

    def wait_deletes(self) -> None:
        """Return once the part files deleted so far are gone (`background_deletes`)."""
        if self._deleter is not None:
            self._deleter.wait()

    def release(self, mine: Callable[[RecordingMeta], bool]) -> None:
        """Write out and forget the state of the recordings that are `mine` (a partition's that
        another recorder takes next): their meta.json files, and their part files' deletes."""
        ours = [rec for rec in self._sessions.values() if mine(rec.meta)]
        try:
            metas = MetaBatch()
            for rec in ours:
                rec.settle(force=True, metas=metas)
            metas.write(self.storage)
        finally:
            for rec in ours:
                rec.close_files()
                del self._sessions[rec.session_id]
            self._absent.clear()
            self.wait_deletes()

    def reset(self) -> None:
        """Forget every in-memory state (after a failed batch); it is reloaded from disk."""
        for rec in self._sessions.values():
            rec.close_files()
        self._sessions.clear()
        self._absent.clear()
        if self._finish_pool is not None:
            self._finish_pool.drop_queued()  # what is in the worker comes back to no one

    def close(self) -> None:
        """Write what lags, then forget every state."""
        try:
            self.flush()
        except OSError as exc:  # what lags is rebuilt from the part files on the next start
            log.error("could not write every meta.json before stopping: %s", exc)
        finally:
            self.reset()
            if self._deleter is not None:
                self._deleter.stop()
            if self._finish_pool is not None:
                self._finish_pool.close()


def _batch_events(data: bytes) -> list[tuple[events_pb2.StepEvent, EntryBytes | None, int]]:
    """The events of a StepEventBatch with each one's own bytes as they came (stored as they are)
    and its serialized size; without them (None: serialized again when stored) for a batch that
    is not only event entries. A split event comes light: its observation's data stays in its
    entry, undecompressed (`held_observations.light_split_event`)."""
    try:
        found = entries(data)
    except NotABatchError:  # other fields too (a newer env host): a generic parse, put in seq order
        batch = events_pb2.StepEventBatch.FromString(data)
        events = [*batch.events, *(events_pb2.StepEvent.FromString(decompress_event(z)) for z in batch.zstd_events),
                  *(EntryBytes(split.SerializeToString(), EntryForm.SPLIT).event() for split in batch.split_events)]
        return [(event, None, event.ByteSize()) for event in sorted(events, key=lambda e: e.seq)]
    out: list[tuple[events_pb2.StepEvent, EntryBytes | None, int]] = []
    for entry in found:
        if entry.form == EntryForm.SPLIT:
            event, size = light_split_event(entry)
            out.append((event, entry, size))
            continue
        serialized = entry.event_bytes()
        out.append((events_pb2.StepEvent.FromString(serialized), entry, len(serialized)))
    return out
