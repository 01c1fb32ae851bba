"""One recorded session's files and state: exactly-once appends, episode ends, crash recovery.

Durable state is only what is stored: meta.json and the finished `episode-*.npz` in the
recordings storage (a folder or S3), the open `episode-*.part` files (and `orphans.part`) in the
recording's local folder (the recording's own folder in a folder storage, `<spool>/<id>` with S3).
`Recording.load` derives everything else from them: the last seq written, the seqs still missing,
which episodes are open and which must be finished.

Per batch the writer calls `append` for each event (in order), then `sync` (write the batch's
records, one write per run of events bound for the same part file, and make the touched part
files durable, together with every other recording's of the batch: `durable_files.SyncGroup`;
from here the events may be acked), then `settle` (finish ended episodes:
npz, built here or, for a busy batch, by `finish_pool`'s worker and stored at a later settle; then, at most every `meta_interval` seconds unless something urgent changed, meta.json
listing them (then the manifest, on S3), and only then delete their parts; every step is
idempotent, so a crash anywhere in it is repaired by `load`). Until meta.json lists a finished
episode its part file stays: the events stay durable where `load` finds them.

recording.json's `world_changes` grows as events carrying world changes arrive
(`recorded_world_changes`) and is written with the next meta.json (so before the part files
holding them go); `load` adds those of the part files it finds.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from enum import Enum, StrEnum
from pathlib import Path
from typing import Any

from platform_contracts.step_batches import EntryForm
from platform_recorder.meta import RecordingMeta
from platform_recorder.storage.durable_files import SyncGroup, fsync_dir
from platform_recorder.storage.interface import Storage
from platform_recorder.writing.endless_files import is_full, is_restart, route_endless
from platform_recorder.writing.episodes import START_KINDS
from platform_recorder.writing.finish_pool import FRAME_WEIGHT, FinishHandle, FinishJob, FinishPool, prepare_from_part
from platform_recorder.writing.finishing import PreparedEpisode, apply_close, store_episode
from platform_recorder.writing.held_observations import HeldObservations
from platform_recorder.writing.life_columns import recorded_steps
from platform_recorder.writing.lives import close_in_life, place_from_meta
from platform_recorder.writing.meta_batches import MetaBatch
from platform_recorder.writing.part_deleter import PartDeleter
from platform_recorder.writing.open_episodes import OpenEpisode, scan_parts
from platform_recorder.writing.part_files import (
    ORPHANS_PART,
    WRITTEN,
    PartWriter,
    episode_index,
    frame_record,
    part_path,
    read_part,
)
from platform_recorder.writing.recorded_world_changes import add_world_changes, event_world_changes
from platform_recorder.writing.recording_json import apply_close_to_info
from platform_recorder.writing.recording_objects import RecordingObjects
from simulusion.bus.v1 import events_pb2

log = logging.getLogger(__name__)

# A jump in seq larger than this is logged but its missing seqs are not tracked one by one.
MAX_TRACKED_GAP = 100_000
KNOWN_KINDS = (*START_KINDS, "step")


class Appended(StrEnum):
    """What `Recording.append` did with a step event (the writer counts them by value)."""

    WRITTEN = "written"  # in its episode's part file
    DUPLICATE = "duplicate"  # a seq already written: nothing done
    ORPHAN = "orphan"  # in orphans.part (its seq in meta.json's orphan_seqs)


class OrphanReason(Enum):
    """Why a step event goes to orphans.part rather than to an episode's file (the log's words)."""

    NO_SEQ = "it has no seq"
    ENDLESS_FILES_FINISHED = "the files of its endless episode {episode} are finished"
    EPISODE_FINISHED = "its episode {index} is already finished"
    EPISODE_STARTED = "episode {index} already started"
    EPISODE_ENDED = "episode {index} already ended"
    NO_KIND = "it has no kind"


@dataclass(frozen=True)
class AppendDecision:
    """Where `Recording.append` puts a step event, decided from the recording's state before
    anything is written (`Recording.decide`).

    Attributes:
        outcome: WRITTEN, DUPLICATE or ORPHAN.
        index: the episode file it goes to (-1 when none: no seq, a duplicate, an endless episode
            whose files are finished).
        late: its seq was missing (a gap it fills): it arrives after later ones.
        gap: (first, last) seqs missing right before it, when it jumps ahead.
        reason: why it is an ORPHAN; None otherwise.
    """

    outcome: Appended
    index: int = -1
    late: bool = False
    gap: tuple[int, int] | None = None
    reason: OrphanReason | None = None

    def why(self, event: events_pb2.StepEvent) -> str:
        """The reason in words ("" when it is no orphan)."""
        return "" if self.reason is None else self.reason.value.format(index=self.index, episode=event.episode)


class Recording:
    """The state of one recorded session; build it with `Recording.load`.

    Args:
        objects: its finished files in the storage.
        local_dir: the folder of its part files.
        meta: meta.json's content.
        info: recording.json's content.
        meta_interval: see `meta_due`.
        spooled: `local_dir` is a spool folder of its own (removed once the recording closed and
            nothing is left in it), not the recording's folder in a folder storage.
    """

    def __init__(
        self,
        objects: RecordingObjects,
        local_dir: Path,
        meta: RecordingMeta,
        info: dict[str, Any],
        meta_interval: float = 0.0,
        spooled: bool = False,
    ) -> None:
        self.objects = objects
        self.dir = local_dir
        self.meta = meta
        self.info = info
        self.meta_interval = meta_interval
        self.spooled = spooled
        self.session_id = meta.session_id
        self.env_id = meta.env_id
        self.last_seq = int(meta.last_seq)
        self.missing: set[int] = {int(s) for s in meta.missing_seqs}
        self.finished: set[int] = {int(e["index"]) for e in meta.episodes}
        self.open: dict[int, OpenEpisode] = {}
        self.life = place_from_meta(meta)  # its place in a life (None: no life)
        self.endless = bool((info.get("spec") or {}).get("endless"))  # files cut by endless_files
        self._used: set[int] = set(self.finished) | objects.episodes  # file indexes used so far
        self._to_finish: set[int] = set()
        self._life_due = False  # the close is to be written into the life's index
        self._close: events_pb2.SessionEvent | None = None
        self._orphans: PartWriter | None = None
        self._touched: set[PartWriter] = set()
        self._runs: list[tuple[PartWriter, list[bytes]]] = []  # this batch's records, in order
        self._unlink_when_listed: set[int] = set()  # finished episodes whose part files remain
        self._info_dirty = False  # recording.json is behind (a close): written with meta.json
        self._meta_dirty = False  # meta.json is behind: written at the next due settle
        self._meta_urgent = False  # ... at the next settle whatever the interval
        self._meta_written_at = time.monotonic()
        self.deleter: PartDeleter | None = None  # deletes listed parts off this thread (else in line)
        self.finish_pool: FinishPool | None = None  # prepares finished episodes (else in line)
        self._finishing: dict[int, FinishHandle] = {}  # episodes being prepared by `finish_pool`
        self._dir_made = False  # `dir` is known to exist (`_make_local_dir`)

    @property
    def where(self) -> str:
        return f"session {self.session_id} env {self.env_id}"

    @property
    def quiet(self) -> bool:
        """Nothing pending (all synced and settled): the state can be dropped and reloaded later."""
        return (
            not self._to_finish and self._close is None and not self._touched and not self._meta_dirty
            and not self._finishing
        )

    @property
    def meta_pending(self) -> bool:
        """meta.json is behind the finished episodes (see `meta_due`), or episodes are being
        prepared that it will list."""
        return self._meta_dirty or bool(self._finishing)

    @property
    def preparing(self) -> bool:
        """Finished episodes are being prepared (`finish_pool`), not yet listed."""
        return bool(self._finishing)

    @property
    def meta_dirty(self) -> bool:
        """meta.json is behind what is in memory (written when due: `meta_due`)."""
        return self._meta_dirty

    # ---------------------------------------------------------------- recovery

    @classmethod
    def load(
        cls,
        storage: Storage,
        session_id: str,
        local_dir: Path,
        meta_interval: float = 0.0,
        spooled: bool = False,
    ) -> Recording | None:
        """The recording `session_id` as left in the storage and its local folder (None without a
        meta.json).

        Cuts torn tails of part files, and schedules (for the next `settle`) the episodes a crash
        left unfinished: those whose npz exists or that ended (`settle` also finishes those that a
        later episode follows, once no seq is missing).
        """
        loaded = RecordingObjects.load(storage, session_id)
        if loaded is None:
            return None
        meta, info, objects = loaded
        rec = cls(objects, local_dir, meta, info, meta_interval, spooled)
        scan = scan_parts(local_dir, rec.finished, objects.episodes, rec.endless)
        # An npz that meta.json does not name yet was written without an fsync of its own (see
        # `RecordingObjects.put_episode`): after an OS crash it may be torn, so it is written
        # again from its episode's part file, which is kept until meta.json names the npz.
        objects.episodes -= (scan.to_finish | set(scan.open)) - rec.finished
        found = scan.found
        rec.open = scan.open
        rec._to_finish = scan.to_finish
        rec._used.update(scan.to_finish, scan.open)
        rec._used.update(i for p in local_dir.glob("*.failed.part") if (i := episode_index(p)) is not None)
        if rec.endless:
            rec._to_finish.update(i for i, state in rec.open.items() if is_full(state))
        missing_before = set(rec.missing)
        top = max(found, default=0)
        if top > rec.last_seq:
            if top - rec.last_seq <= MAX_TRACKED_GAP:
                rec.missing.update(range(rec.last_seq + 1, top + 1))
            rec.last_seq = top
        rec.missing -= found
        rec._meta_dirty = rec.missing != missing_before or rec.last_seq != meta.last_seq
        if add_world_changes(rec.info, scan.world_changes):  # events of part files recording.json missed
            rec._meta_dirty = rec._info_dirty = True
        rec._meta_urgent = True  # what recovery finishes is listed at once
        if rec.missing:
            log.warning(
                "%s: seqs %s are missing so far (a redelivery may bring them)",
                rec.where,
                _ranges(rec.missing),
            )
        return rec

    # ---------------------------------------------------------------- appending

    def decide(self, event: events_pb2.StepEvent) -> AppendDecision:
        """Where `append` puts `event`, from the recording's state alone (nothing changes)."""
        seq = event.seq
        if seq == 0:
            return AppendDecision(Appended.ORPHAN, reason=OrphanReason.NO_SEQ)
        late = seq in self.missing
        if seq <= self.last_seq and not late:
            return AppendDecision(Appended.DUPLICATE)
        gap = (self.last_seq + 1, seq - 1) if seq > self.last_seq + 1 else None
        kind = event.WhichOneof("kind")
        routed = route_endless(event.episode, kind, late, self.open, self._used) if self.endless else event.episode
        index = -1 if routed is None else int(routed)
        state = self.open.get(index)
        reason: OrphanReason | None = None
        if routed is None:
            reason = OrphanReason.ENDLESS_FILES_FINISHED
        elif index in self.finished or index in self._finishing or (state is None and self.objects.has_episode(index)):
            reason = OrphanReason.EPISODE_FINISHED
        elif kind in START_KINDS and state is not None and state.has_start and not self._restarts(event, state):
            reason = OrphanReason.EPISODE_STARTED
        elif kind == "step" and state is not None and state.ended:
            reason = OrphanReason.EPISODE_ENDED
        elif kind not in KNOWN_KINDS:
            reason = OrphanReason.NO_KIND
        outcome = Appended.WRITTEN if reason is None else Appended.ORPHAN
        return AppendDecision(outcome, index=index, late=late, gap=gap, reason=reason)

    def _restarts(self, event: events_pb2.StepEvent, state: OpenEpisode) -> bool:
        """`event` is the reset of an endless run's restart in place, in the file of its step."""
        return self.endless and event.WhichOneof("kind") == "reset" and is_restart(event.episode, state)

    def append(self, event: events_pb2.StepEvent, data: bytes | None = None, form: EntryForm = EntryForm.PLAIN,
               size: int | None = None) -> AppendDecision:
        """Take one step event for writing (not yet durable: see `sync`) as `decide` says: in its
        episode's part file (WRITTEN), not at all (DUPLICATE), or in orphans.part (ORPHAN).

        Args:
            event: the parsed event.
            data: its serialized form as received (written as is); None: serialize `event`.
            form: how `data` holds the event (as a batch brought it: serialized, a zstd frame of
                that, or split: `platform_contracts.step_batches`); `event` is light when split.
            size: the serialized event's size, when known (else measured).
        """
        decision = self.decide(event)
        if decision.outcome is Appended.DUPLICATE:
            return decision
        seq = event.seq
        if decision.reason is OrphanReason.NO_SEQ:
            log.error("%s: step event without seq (episode %d step %d), kept in %s",
                      self.where, event.episode, event.episode_step, ORPHANS_PART)
            self._orphan(event, data, form)
            return decision
        self._note_world_changes(event)
        if decision.gap is not None:
            first, last = decision.gap
            log.error("GAP in %s: step events %d..%d are missing before seq %d (episode %d step %d); "
                      "writing it anyway", self.where, first, last, seq, event.episode, event.episode_step)
            if last - first + 2 <= MAX_TRACKED_GAP:
                self.missing.update(range(first, last + 1))
            self._meta_dirty = self._meta_urgent = True
        if decision.late:
            log.warning("%s: late step event seq %d (episode %d step %d) arrived after seq %d",
                        self.where, seq, event.episode, event.episode_step, self.last_seq)
            self.missing.discard(seq)
            self._meta_dirty = self._meta_urgent = True
        self.last_seq = max(self.last_seq, seq)
        if decision.outcome is Appended.ORPHAN:
            log.error("%s: step event seq %d (episode %d step %d) kept in %s: %s", self.where, seq,
                      decision.index, event.episode_step, ORPHANS_PART, decision.why(event))
            self._orphan(event, data, form)
            return decision
        self._write_to_episode(decision, event, data, form, size)
        return decision

    def _write_to_episode(self, decision: AppendDecision, event: events_pb2.StepEvent, data: bytes | None,
                          form: EntryForm, size: int | None) -> None:
        """Write a WRITTEN event to its episode's file (opened for it when none is), and note which
        episodes it starts, ends or fills (finished at the next settle)."""
        index, kind = decision.index, event.WhichOneof("kind")
        if kind in START_KINDS and not decision.late:  # a new episode: the earlier ones are done
            self._to_finish.update(i for i in self.open if i < index)
        state = self.open.get(index)
        if state is None:
            self._make_local_dir()
            state = self.open[index] = OpenEpisode(index, PartWriter(part_path(self.dir, index)))
            self._used.add(index)
            if kind == "step" and not self.endless:  # an endless run's next file begins with a step
                log.warning("%s: episode %d starts at seq %d without a reset/restore event", self.where, index,
                            event.seq)
        written = self._write(state.writer, event, data, form)
        serialized = size if size is not None else event.ByteSize() if form != EntryForm.PLAIN else written
        state.keep(event, serialized, data, form)
        if kind in START_KINDS:
            state.has_start = True
        if self.endless:  # an ended step restarts in place: the file goes on (endless_files)
            if is_full(state):
                self._to_finish.add(index)  # the run goes on in the next file
        elif kind == "step" and (event.step.result.terminated or event.step.result.truncated):
            state.ended = True
            self._to_finish.add(index)

    def _note_world_changes(self, event: events_pb2.StepEvent) -> None:
        """recording.json lists the world changes `event` carries (written with the next meta.json;
        until then its part file keeps them, and `load` finds them there)."""
        changes = event_world_changes(event, self.where)
        if changes and add_world_changes(self.info, changes):
            self._info_dirty = self._meta_dirty = True

    def _write(self, writer: PartWriter, event: events_pb2.StepEvent, data: bytes | None,
               form: EntryForm = EntryForm.PLAIN) -> int:
        """Queue a record for `writer` (written by `sync`); its size."""
        record = (frame_record(event.SerializeToString()) if data is None
                  else frame_record(data, form))
        runs = self._runs
        if runs and runs[-1][0] is writer:
            runs[-1][1].append(record)
        else:
            runs.append((writer, [record]))
            self._touched.add(writer)
        return len(record)

    def _make_local_dir(self) -> None:
        """Create the local folder of the part files (durably) when missing (checked once: only
        `_remove_empty_spool` removes it)."""
        if self._dir_made:
            return
        if not self.dir.is_dir():
            self.dir.mkdir(parents=True, exist_ok=True)
            fsync_dir(self.dir.parent)
        self._dir_made = True

    def _orphan(self, event: events_pb2.StepEvent, data: bytes | None, form: EntryForm = EntryForm.PLAIN) -> None:
        if self._orphans is None:
            self._make_local_dir()
            self._orphans = PartWriter(self.dir / ORPHANS_PART)
        self._write(self._orphans, event, data, form)
        self.meta.orphan_seqs.append(event.seq)
        self._meta_dirty = self._meta_urgent = True

    def request_close(self, event: events_pb2.SessionEvent) -> None:
        """Finish every open episode and mark the recording closed/crashed at the next settle."""
        self._close = event

    # ---------------------------------------------------------------- durability

    def sync(self, group: SyncGroup | None = None) -> None:
        """Write the records taken since the last sync and make their part files durable: then the
        events may be acked. With a `group` (the writer's, shared by the batch's recordings) they
        are durable only once the caller commits it."""
        written = WRITTEN
        for writer, records in self._runs:
            data = b"".join(records)
            writer.write(data)
            written.records += len(records)
            written.bytes += len(data)
        self._runs.clear()
        own = group is None
        group = SyncGroup() if group is None else group
        for writer in self._touched:
            writer.sync(group)
        self._touched.clear()
        if own:
            group.commit()

    def settle(self, now: float | None = None, force: bool = False, metas: MetaBatch | None = None) -> None:
        """Finish ended episodes and apply a close; write meta.json when it is due (see `meta_due`)
        or `force`d: into `metas` when given (written with the batch's others), unless a life's
        index waits for it."""
        self.sync()  # no-op after the writer's sync: nothing must be finished from unwritten records
        closing = self._close is not None or not self.meta.is_recording
        if closing:
            self._to_finish.update(self.open)
        elif len(self.open) > 1 and not self.missing:
            # A later episode has started (after a crash, its reset may be all that reached disk):
            # the earlier ones are finished once no seq is missing, as their late events could be.
            newest = max(self.open)
            self._to_finish.update(i for i in self.open if i < newest)
        finished: list[tuple[int, dict[str, Any] | None]] = []
        for index in sorted(self._to_finish):
            # an episode with no open state here (what a recovery found: an empty part, or an
            # npz already written) is finished in line: only those with events are `_finishing`
            if self.finish_pool is None or index not in self.open:
                finished.append((index, self._finish_files(index)))
            else:
                self._finishing[index] = self.finish_pool.submit(self._finish_job(index))
        self._to_finish.clear()
        finished += self._take_prepared(wait=force or self._close is not None or closing)
        if self._close is not None:
            self._apply_close(self._close)
            self._close = None
        if finished:
            self._list(finished)
        if self._meta_dirty and (force or closing or self.meta_due(time.monotonic() if now is None else now)):
            if metas is not None and not (self._life_due and self.life is not None):
                metas.add(self)
            else:
                self.write_meta()
        if self._life_due and self.life is not None:
            # after meta.json: a crash before this leaves the close unacked, so it comes again
            close_in_life(self.objects.storage, self.life, self.session_id, self.session_steps(),
                          self.meta.status)
            self._life_due = False

    def collect_prepared(self) -> None:
        """List the episodes `finish_pool` has prepared since (meta.json is then behind)."""
        finished = self._take_prepared(wait=False)
        if finished:
            self._list(finished)

    def _take_prepared(self, wait: bool) -> list[tuple[int, dict[str, Any] | None]]:
        """The episodes `finish_pool` prepared, stored (their npz written): (index, meta entry or
        None for an empty part), each once; with `wait`, all of them (sent off first if queued)."""
        out: list[tuple[int, dict[str, Any] | None]] = []
        for index in sorted(self._finishing):
            handle = self._finishing[index]
            if not wait and not handle.done():
                continue
            del self._finishing[index]
            prepared = handle.result()
            out.append((index, None if prepared is None else self._store(prepared)))
        return out

    def _store(self, prepared: PreparedEpisode) -> dict[str, Any]:
        return store_episode(self.objects, self.dir, prepared, self.where)

    def session_steps(self) -> int:
        """The steps of the session recorded so far: the life steps it takes."""
        if self._finishing:
            self._list(self._take_prepared(wait=True))
        open_events = [state.events if state.events is not None else read_part(state.writer.path, held=HeldObservations())
                       for state in self.open.values()]
        return recorded_steps(self.meta.episodes, open_events, self.life)

    def meta_due(self, now: float) -> bool:
        """meta.json is behind and must be written now: something other than finished episodes
        changed (a gap, an orphan, a close...), or `meta_interval` passed since the last write.
        (Its size is bounded: a long recording's entries go to sealed lists,
        platform_recorder.episode_lists.)"""
        return self._meta_dirty and (self._meta_urgent or now - self._meta_written_at >= self.meta_interval)

    def _list(self, finished: list[tuple[int, dict[str, Any] | None]]) -> None:
        """Put finished episodes in the in-memory meta; their parts go once meta.json is written."""
        episodes = self.meta.episodes
        keys = set(self.meta.agent_keys)
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
        self.meta.agent_keys = sorted(keys)
        self._meta_dirty = True

    def write_meta(self) -> None:
        """Write meta.json (after making the npz files it names durable; recording.json too after
        a close; then the manifest on S3), then delete the part files of the episodes it lists.
        Those deletes need no fsync: a part that comes back after a crash is finished again by
        `load` + `settle`, idempotently. (Several recordings at once: `meta_batches.MetaBatch`.)"""
        self._prepare_meta()
        self.objects.save(meta=self.meta, info=self.info if self._info_dirty else None)
        self.meta_written()

    def _prepare_meta(self) -> None:
        self.meta.last_seq = self.last_seq
        self.meta.missing_seqs = sorted(self.missing)

    def stage_meta(self, group: SyncGroup) -> list[tuple[str, str]]:
        """The first step of a batched `write_meta` (see `meta_batches.MetaBatch`): the new files,
        staged (`RecordingObjects.stage`)."""
        self._prepare_meta()
        return self.objects.stage(meta=self.meta, info=self.info if self._info_dirty else None, group=group)

    def meta_written(self) -> None:
        """meta.json is durable: delete the part files of the episodes it lists."""
        self._meta_dirty = self._meta_urgent = self._info_dirty = False
        self._meta_written_at = time.monotonic()
        for index in sorted(self._unlink_when_listed):
            if self.deleter is not None:
                self.deleter.delete(part_path(self.dir, index))
            else:
                part_path(self.dir, index).unlink(missing_ok=True)
        self._unlink_when_listed.clear()
        if self.spooled and not self.meta.is_recording and not self.open:
            self._remove_empty_spool()

    def _remove_empty_spool(self) -> None:
        """A closed recording's spool folder goes once empty (orphans or failed parts keep it)."""
        if self._orphans is not None or not self.dir.is_dir():
            return
        self._dir_made = False
        if self.deleter is not None:  # after its parts' deletes
            self.deleter.remove_empty_folder(self.dir)
            return
        try:
            self.dir.rmdir()
        except OSError:
            return

    def _finish_job(self, index: int) -> FinishJob:
        """What `finish_pool` needs to prepare an episode (its part file is complete and durable:
        `settle` synced it), which is no longer open here."""
        state = self._close_episode(index)
        kept = (state.events, state.held) if state is not None and state.events is not None else None
        weight = 16 if state is None else 1 + state.steps + FRAME_WEIGHT * state.frames_to_encode
        return FinishJob(str(part_path(self.dir, index)), index, self.where, self.info.get("spec"), self.life,
                         self.endless, kept, weight)

    def _close_episode(self, index: int) -> OpenEpisode | None:
        """The open state of an episode that is finishing, its part file closed (None if none)."""
        state = self.open.pop(index, None)
        if state is not None:
            state.writer.close()
            self._touched.discard(state.writer)
        return state

    def _finish_files(self, index: int) -> dict[str, Any] | None:
        """Write the npz of an episode (unless it exists) and return its meta entry."""
        prepared = prepare_from_part(self._finish_job(index))  # its kept events, or its part read back
        return None if prepared is None else self._store(prepared)

    def _apply_close(self, event: events_pb2.SessionEvent) -> None:
        apply_close(self.meta, event, self.last_seq, self.where)
        apply_close_to_info(self.info, self.meta)
        self._meta_dirty = self._meta_urgent = self._info_dirty = True
        self._life_due = self.life is not None

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
