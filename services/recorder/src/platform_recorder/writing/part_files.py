"""Part files: the append-only, length-prefixed StepEvent logs of episodes being recorded (always
local: the recording's folder in a folder storage, the spool folder with S3), and their names.

Format: a sequence of records `<uint32 little-endian length><serialized StepEvent>`; a length
with its top bit set (`COMPRESSED_FLAG`) is that of a zstd frame of the serialized StepEvent,
one with the next bit set (`SPLIT_FLAG`) that of a serialized `SplitStepEvent` (large events,
kept as the env host sent them: `platform_contracts.step_batches`); records are under 1 GiB. A crash can
leave a torn last record (never acked, so it is redelivered): `read_part(repair=True)` cuts it.
"""

from __future__ import annotations

import logging
import os
import re
import struct
from pathlib import Path

from google.protobuf.message import DecodeError
from platform_contracts.step_batches import EntryBytes, EntryForm, NotABatchError
from platform_recorder.layout import episode_stem
from platform_recorder.storage.durable_files import SyncGroup
from platform_recorder.writing.held_observations import HeldObservations, light_split_event
from simulusion.bus.v1 import events_pb2

log = logging.getLogger(__name__)

_LEN = struct.Struct("<I")
COMPRESSED_FLAG = 1 << 31  # in a record's length: the record is a zstd-compressed StepEvent
SPLIT_FLAG = 1 << 30  # in a record's length: the record is a serialized SplitStepEvent
_FORM_FLAGS = {EntryForm.PLAIN: 0, EntryForm.ZSTD: COMPRESSED_FLAG, EntryForm.SPLIT: SPLIT_FLAG}
_LENGTH_MASK = SPLIT_FLAG - 1
ORPHANS_PART = "orphans.part"
_EPISODE_RE = re.compile(r"^episode-(\d{6,})\.(part|npz)$")


def part_path(session_dir: Path, index: int) -> Path:
    return session_dir / f"{episode_stem(index)}.part"


def episode_index(path: Path) -> int | None:
    """The episode index of an `episode-NNNNNN.part|npz` file name, else None."""
    match = _EPISODE_RE.match(path.name)
    return int(match.group(1)) if match else None


def part_files(session_dir: Path) -> dict[int, Path]:
    """Episode index -> part file, for every episode part file in the folder."""
    out: dict[int, Path] = {}
    for path in session_dir.glob("episode-*.part"):
        index = episode_index(path)
        if index is not None:
            out[index] = path
    return dict(sorted(out.items()))


def encode_record(event: events_pb2.StepEvent) -> bytes:
    return frame_record(event.SerializeToString())


def frame_record(data: bytes, form: EntryForm = EntryForm.PLAIN) -> bytes:
    """One part-file record: the length, then the event's bytes as received (not re-encoded):
    a serialized StepEvent, a zstd frame of one or a serialized SplitStepEvent, as `form` says."""
    return _LEN.pack(len(data) | _FORM_FLAGS[form]) + data


def _record_form(length: int) -> EntryForm:
    if length & COMPRESSED_FLAG:
        return EntryForm.ZSTD
    return EntryForm.SPLIT if length & SPLIT_FLAG else EntryForm.PLAIN


def read_part(path: Path, repair: bool = False, held: HeldObservations | None = None) -> list[events_pb2.StepEvent]:
    """The events of a part file, in file order.

    A torn or unreadable tail (a crash mid-append) is ignored; with `repair` it is cut off and the
    file fsynced, so what remains is durable and later appends follow a whole record. With `held`,
    large observations are left in their records there (`HeldObservations.lighten`).
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    events, offset = parse_records(data, held)
    if repair:
        with open(path, "r+b") as f:
            if offset != len(data):
                log.warning(
                    "part file %s: cutting a torn tail of %d bytes (never acked, will be redelivered)",
                    path,
                    len(data) - offset,
                )
                f.truncate(offset)
            os.fsync(f.fileno())
    return events


def parse_records(
    data: bytes, held: HeldObservations | None = None
) -> tuple[list[events_pb2.StepEvent], int]:
    """(the events of the whole records at the start of `data`, the offset after the last of
    them). It stops at a torn record (one cut short by an append in progress or a crash) or one
    that does not parse; with `held`, large observations are left in their records (see `read_part`)."""
    events: list[events_pb2.StepEvent] = []
    offset = 0
    while offset + _LEN.size <= len(data):
        (length,) = _LEN.unpack_from(data, offset)
        form = _record_form(length)
        end = offset + _LEN.size + (length & _LENGTH_MASK)
        if end > len(data):
            break
        entry = EntryBytes(data[offset + _LEN.size : end], form)
        try:
            if held is not None and form == EntryForm.SPLIT:
                event, size = light_split_event(entry)
            else:
                event = entry.event()
                size = event.ByteSize()
        except (DecodeError, NotABatchError):
            break
        events.append(event if held is None else held.lighten(event, entry.data, form, size)[0])
        offset = end
    return events, offset


class WrittenTally:
    """What this process appended to part files: step records and their bytes (the metrics)."""

    def __init__(self) -> None:
        self.records = 0
        self.bytes = 0


WRITTEN = WrittenTally()


class PartWriter:
    """Appends records to one part file; `sync(group)` and the group's commit make them durable.

    Unbuffered: what `write` gets reaches the OS at once. The recording hands it a batch's records
    in runs, in seq order (one write per run), so a killed process leaves each session's part
    files with a prefix of what was appended, in order.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        try:  # one system call in the common case (a new episode's file), not a stat and an open
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o644)
            self._created = True
        except FileExistsError:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            self._created = False
        self._file = open(fd, "ab", buffering=0)  # noqa: SIM115 - kept open across batches
        self._dirty = False

    def append(self, event: events_pb2.StepEvent) -> None:
        self.write(encode_record(event))

    def write(self, records: bytes) -> None:
        view = memoryview(records)
        while view:
            written = self._file.write(view)
            view = view[written:]
        self._dirty = True

    def sync(self, group: SyncGroup) -> None:
        """Add the file to `group` when it has records not yet durable, or was created since (its
        folder's entry must become durable too); the group's commit makes them so."""
        if self._dirty or self._created:
            group.add_file(self.path)
            self._dirty = self._created = False

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()
