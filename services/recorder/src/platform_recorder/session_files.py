"""Part files: the append-only, length-prefixed StepEvent logs of episodes being recorded.

Format: a sequence of records `<uint32 little-endian length><serialized StepEvent>`. A crash can
leave a torn last record (never acked, so it is redelivered): `read_part(repair=True)` cuts it.
"""

from __future__ import annotations

import logging
import os
import re
import struct
from pathlib import Path

from google.protobuf.message import DecodeError
from simulusion.bus.v1 import events_pb2

from platform_recorder.meta import fsync_dir

log = logging.getLogger(__name__)

_LEN = struct.Struct("<I")
ORPHANS_PART = "orphans.part"
_EPISODE_RE = re.compile(r"^episode-(\d{6,})\.(part|npz)$")


def episode_stem(index: int) -> str:
    return f"episode-{index:06d}"


def part_path(session_dir: Path, index: int) -> Path:
    return session_dir / f"{episode_stem(index)}.part"


def npz_path(session_dir: Path, index: int) -> Path:
    return session_dir / f"{episode_stem(index)}.npz"


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
    data = event.SerializeToString()
    return _LEN.pack(len(data)) + data


def read_part(path: Path, repair: bool = False) -> list[events_pb2.StepEvent]:
    """The events of a part file, in file order.

    A torn or unreadable tail (a crash mid-append) is ignored; with `repair` it is cut off and the
    file fsynced, so what remains is durable and later appends follow a whole record.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    events: list[events_pb2.StepEvent] = []
    offset = 0
    while offset + _LEN.size <= len(data):
        (length,) = _LEN.unpack_from(data, offset)
        end = offset + _LEN.size + length
        if end > len(data):
            break
        event = events_pb2.StepEvent()
        try:
            event.ParseFromString(data[offset + _LEN.size : end])
        except DecodeError:
            break
        events.append(event)
        offset = end
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


class PartWriter:
    """Appends records to one part file; `sync()` makes them durable.

    Unbuffered: each record reaches the OS when appended, so a killed process leaves every part
    file of a batch with a prefix of what was appended, in order (no user-space buffer of one
    file lost while another file's later events survive).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._created = not path.exists()
        self._file = open(path, "ab", buffering=0)  # noqa: SIM115 - kept open across batches
        self._dirty = False

    def append(self, event: events_pb2.StepEvent) -> None:
        view = memoryview(encode_record(event))
        while view:
            written = self._file.write(view)
            view = view[written:]
        self._dirty = True

    def sync(self) -> None:
        if self._dirty:
            os.fsync(self._file.fileno())
            self._dirty = False
        if self._created:
            fsync_dir(self.path.parent)
            self._created = False

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()
