"""Small Doom WADs written by the tests themselves (no map editor, no downloaded maps).

`write_corridor_wad`: a PWAD of UDMF maps (ZDoom's text map format, which ViZDoom's engine
reads and builds the nodes of itself). Each map is two rooms side by side, 256 map units
square; the player starts in the west room facing east, and the line between the rooms is
the level's exit (ZDoom's `Exit_Normal`, special 243, when the player crosses it): walking
forward reaches it in about a second. `raw_wad` writes any lumps, for malformed files.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from pathlib import Path

# vertices: 0 (0,0) 1 (256,0) 2 (512,0) 3 (512,256) 4 (256,256) 5 (0,256)
_VERTICES = ((0, 0), (256, 0), (512, 0), (512, 256), (256, 256), (0, 256))
# the outer walls, clockwise so that each one's front (right) side faces in: (v1, v2, sector)
_WALLS = ((0, 5, 0), (5, 4, 0), (4, 3, 1), (3, 2, 1), (2, 1, 1), (1, 0, 0))


def corridor_map_text(wall_texture: str = "STARTAN2") -> str:
    """The TEXTMAP of one two-room map whose middle line is the exit."""
    parts = ['namespace = "zdoom";',
             "thing { x = 64.0; y = 128.0; angle = 0; type = 1; "
             "skill1 = true; skill2 = true; skill3 = true; skill4 = true; skill5 = true; single = true; }"]
    parts += [f"vertex {{ x = {x}.0; y = {y}.0; }}" for x, y in _VERTICES]
    sides: list[str] = []
    for v1, v2, sector in _WALLS:
        parts.append(f"linedef {{ v1 = {v1}; v2 = {v2}; sidefront = {len(sides)}; blocking = true; }}")
        sides.append(f'sidedef {{ sector = {sector}; texturemiddle = "{wall_texture}"; }}')
    parts.append(f"linedef {{ v1 = 1; v2 = 4; sidefront = {len(sides)}; sideback = {len(sides) + 1}; "
                 "twosided = true; special = 243; playercross = true; }")
    sides += ["sidedef { sector = 1; }", "sidedef { sector = 0; }"]
    parts += sides
    parts += ['sector { heightfloor = 0; heightceiling = 128; texturefloor = "FLOOR4_8"; '
              'textureceiling = "CEIL3_5"; lightlevel = 192; }'] * 2
    return "\n".join(parts) + "\n"


def raw_wad(lumps: Sequence[tuple[str, bytes]], kind: bytes = b"PWAD") -> bytes:
    """A WAD of `lumps` (name, data), its directory after the data."""
    data = b"".join(body for _, body in lumps)
    directory, offset = b"", 12
    for name, body in lumps:
        directory += struct.pack("<ii8s", offset, len(body), name.encode("ascii"))
        offset += len(body)
    return struct.pack("<4sii", kind, len(lumps), 12 + len(data)) + data + directory


def write_corridor_wad(path: Path, maps: Sequence[str] = ("MAP01",)) -> Path:
    """Write a PWAD with a two-room exit map under each name in `maps` to `path`; returns it."""
    lumps: list[tuple[str, bytes]] = []
    for name in maps:
        lumps += [(name, b""), ("TEXTMAP", corridor_map_text().encode()), ("ENDMAP", b"")]
    path.write_bytes(raw_wad(lumps))
    return path
