"""One finished episode's `.npz`, read member by member straight from the storage.

The file is opened through ranged reads (`Storage.get_range`, buffered), so asking for the
names and shapes of its arrays, one array or one frame reads only those members (on S3: those
byte ranges), never the whole file.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import IO, Any, Protocol

import numpy as np
from platform_recorder.errors import RecorderError, RecordingNotFoundError
from platform_recorder.storage.interface import Storage

FRAMES = "frames"
_BUFFER = 1 << 20


class StorageFile(io.RawIOBase):
    """A read-only, seekable file over one storage object (each read is one `get_range`)."""

    def __init__(self, storage: Storage, key: str, size: int) -> None:
        super().__init__()
        self._storage, self._key, self._size, self._pos = storage, key, size, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        want = min(len(view), self._size - self._pos)
        if want <= 0:
            return 0
        data = self._storage.get_range(self._key, self._pos, want)
        view[: len(data)] = data
        self._pos += len(data)
        return len(data)


class EpisodeArrays(Protocol):
    """What an episode's reader answers: an episode file's (`EpisodeFile`) or an episode built
    in memory (`built_episodes.BuiltEpisode`)."""

    where: str

    @property
    def array_names(self) -> list[str]: ...

    def array_info(self, name: str) -> tuple[str, list[int]]: ...

    def array(self, name: str) -> np.ndarray: ...

    def rows(self, name: str) -> AbstractContextManager[ArrayRows]: ...

    def frame_count(self) -> int: ...

    def frames(self, indexes: Sequence[int]) -> dict[int, bytes]: ...


class EpisodeFile:
    """An open episode file: its array names, their dtypes and shapes, arrays and frames."""

    def __init__(self, zip_file: zipfile.ZipFile, where: str) -> None:
        self._zip = zip_file
        self.where = where  # "recording 'x' episode 3", for messages
        self._members = {n.removesuffix(".npy"): n for n in zip_file.namelist()}

    @property
    def array_names(self) -> list[str]:
        return list(self._members)

    def _member(self, name: str) -> str:
        if name not in self._members:
            raise RecordingNotFoundError(f"{self.where} has no array {name!r}; it has {self.array_names}")
        return self._members[name]

    def array_info(self, name: str) -> tuple[str, list[int]]:
        """(dtype string, shape) from the member's .npy header, without reading its data."""
        with self._zip.open(self._member(name)) as member:
            header = _npy_header(member)
        if header is None:  # a format version without a public header reader: read the array
            array = self.array(name)
            return array.dtype.str, list(array.shape)
        shape, _, dtype = header
        return dtype.str, list(shape)

    def array(self, name: str) -> np.ndarray:
        with self._zip.open(self._member(name)) as member:
            return np.lib.format.read_array(member, allow_pickle=False)

    @contextmanager
    def rows(self, name: str) -> Iterator[ArrayRows]:
        """The array's rows one by one (`ArrayRows`), read as they are asked for: a Pong
        episode's observations are never all in memory at once."""
        with self._zip.open(self._member(name)) as member:
            header = _npy_header(member)
            shape, fortran, dtype = header if header is not None else ((), True, np.dtype("O"))  # read whole, below
            if fortran or dtype.hasobject or dtype.byteorder == ">" or not shape:
                yield ArrayRows.of_array(self.array(name))
            else:
                yield ArrayRows(dtype, tuple(shape), member)

    def frame_count(self) -> int:
        """The number of rows of the JPEG `frames` array (0 when the episode has none)."""
        if FRAMES not in self._members:
            return 0
        _dtype, shape = self.array_info(FRAMES)
        return int(shape[0]) if shape else 0

    def member_signature(self, name: str) -> tuple[int, int]:
        """(CRC-32, size) of an array's member: what tells one stored version of it from another."""
        info = self._zip.getinfo(self._member(name))
        return info.CRC, info.file_size

    def frame_rows(self) -> list[bytes]:
        """Every row of the JPEG `frames` array as bytes (`b""` where a row has no frame)."""
        return [bytes(row) for row in self.array(FRAMES)] if self.frame_count() else []

    def frames(self, indexes: Sequence[int], rows: Sequence[bytes] | None = None) -> dict[int, bytes]:
        """JPEG bytes of the frames at `indexes` (rows of the `frames` array; `rows`: those rows
        already read, e.g. by `RecentFrames`).

        Raises:
            RecordingNotFoundError: no JPEG frames, an index out of range (the range is named),
                or a step that had no frame.
        """
        count = self.frame_count()
        return select_frames(self.where, (self.array(FRAMES) if rows is None else rows) if count else [], count,
                             indexes)


def select_frames(where: str, rows: Sequence[bytes] | np.ndarray, count: int, indexes: Sequence[int]) -> dict[int, bytes]:
    """JPEG bytes of the frames at `indexes` of an episode's `count` frame `rows` (`where`
    names the episode in messages).

    Raises:
        RecordingNotFoundError: no JPEG frames, an index out of range (the range is named),
            or a step that had no frame.
    """
    if count == 0:
        raise RecordingNotFoundError(
            f"{where} has no JPEG frames (record with record_frames=True; raw RGB frames are "
            "the array 'frames_rgb')"
        )
    for i in indexes:
        if not 0 <= i < count:
            raise RecordingNotFoundError(f"{where} has frames 0..{count - 1} ({count} frames); there is no frame {i}")
    out: dict[int, bytes] = {}
    for i in indexes:
        data = bytes(rows[i])
        if not data:
            raise RecordingNotFoundError(f"{where}: step row {i} has no frame (none was rendered)")
        out[i] = data
    return out


class ArrayRows:
    """The rows of one array of an episode file (`EpisodeFile.rows`): `dtype`, `count` rows of
    `row_shape`; `next_row()` gives the next row's C-order bytes."""

    def __init__(self, dtype: np.dtype, shape: tuple[int, ...], member: Any = None,
                 array: np.ndarray | None = None) -> None:
        self.dtype = dtype
        self.count = shape[0] if shape else 1
        self.row_shape = shape[1:]
        self._row_bytes = dtype.itemsize * int(np.prod(self.row_shape, dtype=np.int64))
        self._member = member
        self._array = array
        self._next = 0

    @classmethod
    def of_array(cls, array: np.ndarray) -> ArrayRows:
        """The rows of an array already read (C order, at least one dimension)."""
        array = np.ascontiguousarray(array.reshape(1) if array.ndim == 0 else array)
        if array.dtype.byteorder == ">":
            array = array.astype(array.dtype.newbyteorder("<"))
        return cls(array.dtype, array.shape, array=array)

    def next_row(self) -> bytes:
        """The next row's bytes.

        Raises:
            RecorderError: the file ends before the row does.
        """
        index, self._next = self._next, self._next + 1
        if self._array is not None:
            row: bytes = self._array[index].tobytes()
            return row
        data: bytes = self._member.read(self._row_bytes)
        if len(data) != self._row_bytes:
            raise RecorderError(f"an array's row {index} is cut short: {len(data)} of {self._row_bytes} bytes")
        return data


@contextmanager
def open_episode(storage: Storage, key: str, size: int, where: str) -> Iterator[EpisodeFile]:
    """Open the `.npz` stored at `key` (of `size` bytes) for reading member by member."""
    raw = io.BufferedReader(StorageFile(storage, key, size), buffer_size=_BUFFER)
    try:
        with zipfile.ZipFile(raw) as zip_file:
            yield EpisodeFile(zip_file, where)
    except zipfile.BadZipFile as exc:
        raise RecorderError(f"{where}: the episode file is not a readable .npz ({exc})") from None
    finally:
        raw.close()


def _npy_header(member: IO[bytes]) -> tuple[tuple[int, ...], bool, np.dtype] | None:
    """(shape, fortran_order, dtype) from a .npy member's header, leaving it at the data; None
    for a format version NumPy has no public header reader for."""
    version = np.lib.format.read_magic(member)
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(member)
    if version == (2, 0):
        return np.lib.format.read_array_header_2_0(member)
    return None
