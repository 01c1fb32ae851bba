"""Reading a WAD file's directory: what kind it is, whether it is whole, and which maps it holds.

A WAD is a 12-byte header (`IWAD` or `PWAD`, the number of lumps, the offset of the
directory; little-endian int32s), the lumps' data, and a directory of 16-byte entries (offset,
size, an 8-byte NUL-padded name). A map is an empty marker lump (its name is the map's, e.g.
`MAP01` or `E1M1`) followed by `THINGS` (the classic Doom and Hexen formats) or `TEXTMAP` (UDMF).

Only the header and the directory are read, so checking a 20 MB file reads a few kB.
"""

from __future__ import annotations

import os
import re
import struct
from dataclasses import dataclass
from typing import BinaryIO

HEADER = struct.Struct("<4sii")
ENTRY = struct.Struct("<ii8s")
KINDS = (b"IWAD", b"PWAD")
# Lumps that follow a map's marker: the first one says it is a map.
MAP_FIRST_LUMPS = ("THINGS", "TEXTMAP")


class WadFormatError(ValueError):
    """A file that is not a whole WAD, or holds no map; the message says what is wrong."""


@dataclass(frozen=True)
class WadDirectory:
    """What a WAD holds.

    Attributes:
        kind: "IWAD" (a whole game) or "PWAD" (a patch: maps played on top of a game).
        lumps: how many lumps its directory lists.
        maps: its maps' names in file order, e.g. ("MAP01", "MAP02").
    """

    kind: str
    lumps: int
    maps: tuple[str, ...]

    def base_game(self) -> str:
        """The Freedoom game its maps play on: "freedoom1.wad" for `ExMy` maps (Doom's episodes),
        "freedoom2.wad" for `MAPxx` maps (Doom II's numbering) and any other name."""
        episodic = self.maps and all(re.fullmatch(r"E\dM\d", name) for name in self.maps)
        return "freedoom1.wad" if episodic else "freedoom2.wad"


def read_wad_directory(file: BinaryIO, size: int | None = None) -> WadDirectory:
    """The header and directory of the WAD in `file` (a seekable binary file of `size` bytes).

    Raises:
        WadFormatError: not a WAD (no `IWAD`/`PWAD` header), a directory or lump that lies
            outside the file, a lump name that is not ASCII, or no map at all.
    """
    if size is None:
        size = os.fstat(file.fileno()).st_size
    file.seek(0)
    header = file.read(HEADER.size)
    if len(header) < HEADER.size:
        raise WadFormatError(f"not a WAD: {size} bytes, shorter than a WAD's {HEADER.size}-byte header")
    magic, count, offset = HEADER.unpack(header)
    if magic not in KINDS:
        raise WadFormatError(f"not a WAD: it starts with {magic!r}, not b'IWAD' or b'PWAD'")
    end = offset + count * ENTRY.size
    if count < 0 or offset < HEADER.size or end > size:
        raise WadFormatError(
            f"a broken WAD: its directory of {count} lumps at byte {offset} does not lie within its {size} bytes"
        )
    file.seek(offset)
    table = file.read(count * ENTRY.size)
    names: list[str] = []
    empty: list[bool] = []
    for index, (position, length, raw) in enumerate(ENTRY.iter_unpack(table)):
        if position < 0 or length < 0 or position + length > size:
            raise WadFormatError(
                f"a broken WAD: lump {index} ({length} bytes at byte {position}) does not lie within its {size} bytes"
            )
        try:
            names.append(raw.split(b"\0", 1)[0].decode("ascii").upper())
            empty.append(length == 0)
        except UnicodeDecodeError:
            raise WadFormatError(f"a broken WAD: lump {index}'s name {raw!r} is not ASCII") from None
    maps = tuple(name for name, marker, after in zip(names, empty, names[1:]) if marker and after in MAP_FIRST_LUMPS)
    if not maps:
        raise WadFormatError(
            f"a {magic.decode()} with {count} lumps and no map (a map is an empty marker lump followed by THINGS or TEXTMAP)"
        )
    return WadDirectory(magic.decode(), count, maps)


def read_wad_file(path: str | os.PathLike[str]) -> WadDirectory:
    """`read_wad_directory` of the file at `path`.

    Raises:
        WadFormatError: as `read_wad_directory`, or the file cannot be read.
    """
    try:
        with open(path, "rb") as file:
            return read_wad_directory(file)
    except OSError as exc:
        raise WadFormatError(f"cannot read the WAD {os.fspath(path)!r}: {exc.strerror or exc}") from None
