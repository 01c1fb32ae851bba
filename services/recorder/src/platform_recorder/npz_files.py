"""An episode's arrays as the bytes of a NumPy `.npz` file (what `numpy.load` reads).

The file is what `numpy.savez_compressed` writes: a ZIP archive with one deflated `<name>.npy`
member per array. It is built here in one pass (each member's `.npy` header from
`numpy.lib.format`, zlib for the deflate and the CRC, `struct` for the ZIP headers) because
`savez_compressed` goes through `zipfile` member by member, which for the small arrays of a
short episode costs about four times the CPU time of the whole encoding; the recorder encodes
an episode every few steps of a fast session. Arrays that need more than this simple form (object
arrays, members of 2 GiB or more: ZIP64) go to `numpy.savez_compressed`.
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Mapping

import numpy as np
from numpy.lib import format as npy_format

COMPRESS_LEVEL = 6  # zlib's default, as numpy's
_LARGEST_MEMBER = 2**31 - 1
_DOS_DATE = (1 << 5) | 1  # 1980-01-01, the ZIP epoch (the time fields are not used)
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")
_CENTRAL_HEADER = struct.Struct("<4s6H3L5H2L")
_END_RECORD = struct.Struct("<4s4H2LH")
_VERSION = 20  # 2.0: deflate
_DEFLATED = 8


def encode_npz(arrays: Mapping[str, np.ndarray]) -> memoryview:
    """The `.npz` bytes of `arrays` (names are member names without `.npy`)."""
    members = [(name, np.asarray(array, order="C")) for name, array in arrays.items()]
    if any(a.dtype.hasobject or a.nbytes >= _LARGEST_MEMBER for _, a in members) or len(members) >= 0xFFFF:
        return _with_numpy(dict(members))
    parts: list[bytes] = []
    central: list[bytes] = []
    offset = 0
    for name, array in members:
        header = io.BytesIO()
        try:
            npy_format.write_array_header_1_0(header, npy_format.header_data_from_array_1_0(array))
        except ValueError:  # a header too large for format 1.0
            return _with_numpy(dict(members))
        head = header.getvalue()
        body = memoryview(array.reshape(-1).view(np.uint8))  # the array's bytes, not copied
        size = len(head) + len(body)
        crc = zlib.crc32(body, zlib.crc32(head))
        compressor = zlib.compressobj(COMPRESS_LEVEL, zlib.DEFLATED, -15)
        packed = compressor.compress(head) + compressor.compress(body) + compressor.flush()
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


def _with_numpy(arrays: dict[str, np.ndarray]) -> memoryview:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getbuffer()
