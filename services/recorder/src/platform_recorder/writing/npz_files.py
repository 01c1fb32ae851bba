"""An episode's arrays as the bytes of a NumPy `.npz` file (what `numpy.load` reads).

The file is what `numpy.savez_compressed` writes: a ZIP archive with one deflated `<name>.npy`
member per array. It is built here in one pass (each member's `.npy` header from
`numpy.lib.format`, ISA-L for the deflate and the CRC, `struct` for the ZIP headers) because
`savez_compressed` goes through `zipfile` member by member, which for the small arrays of a
short episode costs about four times the CPU time of the whole encoding; the recorder encodes
an episode every few steps of a fast session. Arrays that need more than this simple form (object
arrays, members of 2 GiB or more: ZIP64) go to `numpy.savez_compressed`.

The deflate is Intel's ISA-L (`isal`) at its level 2: standard deflate, which numpy (zlib)
reads, ~20x faster than zlib's level 6 on image observations (Pong: 14 vs 320 µs a step) for
about twice the bytes (530 vs 280 a step); on small arrays the same bytes. The recorder
deflates every step of every recorded session: at zlib's level 6 that alone took a third of a
Pong session's own CPU time.

A column may come as `RowBytes` (its rows' bytes, as the events held them): its member is fed
row by row to CRC and deflate, never joined into one array (for an episode of image
observations that would be a fresh allocation of 100 KB a step, whose page faults cost about as
much as deflating it at level 1).
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from isal import isal_zlib
from numpy.lib import format as npy_format

COMPRESS_LEVEL = isal_zlib.ISAL_DEFAULT_COMPRESSION  # 2 (of ISA-L's 0-3)
_LARGEST_MEMBER = 2**31 - 1
_DOS_DATE = (1 << 5) | 1  # 1980-01-01, the ZIP epoch (the time fields are not used)
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")
_CENTRAL_HEADER = struct.Struct("<4s6H3L5H2L")
_END_RECORD = struct.Struct("<4s4H2LH")
_VERSION = 20  # 2.0: deflate
_DEFLATED = 8


class RowBytes:
    """An array of `len(rows)` rows of `dtype` and `row_shape`, given as each row's C-ordered
    bytes; `numpy.asarray` joins them (only encode_npz's fallback and readers that need the
    array do)."""

    def __init__(self, rows: Sequence[bytes], dtype: np.dtype, row_shape: tuple[int, ...]) -> None:
        self.rows = rows
        self.dtype = np.dtype(dtype)
        self.shape = (len(rows), *row_shape)
        self.nbytes = len(rows) * self.dtype.itemsize * int(np.prod(row_shape, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.rows)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        array = np.frombuffer(b"".join(self.rows), dtype=self.dtype).reshape(self.shape)
        return array if dtype is None else array.astype(dtype)


def _header_and_chunks(array: np.ndarray | RowBytes) -> tuple[bytes, Iterable[bytes | memoryview]]:
    """A member's `.npy` header and its data's chunks, in order, not copied.

    Raises:
        ValueError: the header does not fit format 1.0.
    """
    header = io.BytesIO()
    if isinstance(array, RowBytes):
        fields = {"descr": npy_format.dtype_to_descr(array.dtype), "fortran_order": False, "shape": array.shape}
        chunks: Iterable[bytes | memoryview] = array.rows
    else:
        fields = npy_format.header_data_from_array_1_0(array)
        chunks = (array.reshape(-1).view(np.uint8).data,)
    npy_format.write_array_header_1_0(header, fields)
    return header.getvalue(), chunks


def encode_npz(arrays: Mapping[str, np.ndarray | RowBytes]) -> memoryview:
    """The `.npz` bytes of `arrays` (names are member names without `.npy`)."""
    members = [(name, array if isinstance(array, RowBytes) else np.asarray(array, order="C"))
               for name, array in arrays.items()]
    if any(a.dtype.hasobject or a.nbytes >= _LARGEST_MEMBER for _, a in members) or len(members) >= 0xFFFF:
        return _with_numpy(dict(members))
    parts: list[bytes] = []
    central: list[bytes] = []
    offset = 0
    for name, array in members:
        try:
            head, chunks = _header_and_chunks(array)
        except ValueError:  # a header too large for format 1.0
            return _with_numpy(dict(members))
        size = len(head)
        crc = isal_zlib.crc32(head)
        compressor = isal_zlib.compressobj(COMPRESS_LEVEL, isal_zlib.DEFLATED, -15)
        pieces = [compressor.compress(head)]
        for chunk in chunks:
            size += len(chunk)
            crc = isal_zlib.crc32(chunk, crc)
            pieces.append(compressor.compress(chunk))
        pieces.append(compressor.flush())
        packed = b"".join(pieces)
        file_name = f"{name}.npy".encode()
        parts.append(_LOCAL_HEADER.pack(b"PK\x03\x04", _VERSION, 0, _DEFLATED, 0, _DOS_DATE, crc, len(packed),
                                        size, len(file_name), 0) + file_name)
        parts.append(packed)
        central.append(_CENTRAL_HEADER.pack(b"PK\x01\x02", _VERSION, _VERSION, 0, _DEFLATED, 0, _DOS_DATE, crc,
                                            len(packed), size, len(file_name), 0, 0, 0, 0, 0, offset)
                       + file_name)
        offset += len(parts[-2]) + len(packed)
        if offset >= _LARGEST_MEMBER:
            return _with_numpy(dict(members))
    directory = b"".join(central)
    end = _END_RECORD.pack(b"PK\x05\x06", 0, 0, len(central), len(central), len(directory), offset, 0)
    return memoryview(b"".join(parts) + directory + end)


def _with_numpy(arrays: dict[str, np.ndarray | RowBytes]) -> memoryview:
    buffer = io.BytesIO()
    # typed Any: numpy's stub would let a `**` mapping of arrays fill its allow_pickle flag
    members: dict[str, Any] = {name: np.asarray(array) for name, array in arrays.items()}
    np.savez_compressed(buffer, **members)
    return buffer.getbuffer()
