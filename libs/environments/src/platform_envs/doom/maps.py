"""Which map a Doom environment plays: its scenario's own, another of the scenario's WAD
(`doom_map`), or one of your own WAD file's (`wad`, played on top of Freedoom).

A WAD's maps come from its directory (`platform_wads.wad_format`); a map a WAD lacks is an
error naming the maps it has. On the platform, `wad` is an uploaded WAD's id: the env host
copies that WAD into the session's own folder and hands the environment the copy's path.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any

from platform_wads.wad_format import WadDirectory, WadFormatError, read_wad_file

from platform_envs.doom.errors import DoomError, import_vizdoom
from platform_envs.doom.scenarios import Scenario

# The local copies of WADs this process plays, by file name: a snapshot taken in another
# session names that session's copy, and restores onto this one's (the names are content ids).
_local_copies: dict[str, str] = {}
_lock = threading.Lock()


@dataclass(frozen=True)
class MapChoice:
    """What to load.

    Attributes:
        wad: the path of the WAD whose map is played (None: the scenario's own files).
        base_game: the Freedoom IWAD under `wad` ("freedoom1.wad" or "freedoom2.wad"), else None.
        doom_map: the map's name, e.g. "MAP01" (None: the scenario's config decides).
    """

    wad: str | None
    base_game: str | None
    doom_map: str | None


def choose_map(scenario: Scenario, wad: Any, doom_map: Any) -> MapChoice:
    """The map `make_env(scenario, wad=..., doom_map=...)` plays.

    Raises:
        DoomError: `wad` is not a path, the file is not a whole WAD or holds no map, or
            `doom_map` is not one of the maps (the message lists them).
    """
    if doom_map is not None and not isinstance(doom_map, str):
        raise DoomError(f"{scenario.name}: doom_map must be a map name such as 'MAP01', not {doom_map!r}")
    if wad is not None:
        if not isinstance(wad, (str, os.PathLike)) or not os.fspath(wad):
            raise DoomError(f"{scenario.name}: wad must be the path of a WAD file, not {wad!r}")
        path = os.path.abspath(local_copy(os.fspath(wad)))
        directory = _directory(path)
        maps, where, base = directory.maps, f"the WAD {os.path.basename(path)}", directory.base_game()
        _remember(path)
    else:
        path, base = None, None
        maps, where = scenario_maps(scenario), f"{scenario.name}'s WAD"
    if doom_map is None:
        return MapChoice(path, base, maps[0] if path is not None else scenario.doom_map)
    name = doom_map.strip().upper()
    if name not in maps:
        raise DoomError(f"{scenario.name}: no map {doom_map!r} in {where}; its maps: {', '.join(maps)}")
    return MapChoice(path, base, name)


def scenario_maps(scenario: Scenario) -> tuple[str, ...]:
    """The maps of the WAD a scenario plays (a whole level: its Freedoom IWAD's)."""
    vzd = import_vizdoom()
    stem = os.path.splitext(scenario.config)[0]
    folder = vzd.root_path if scenario.level else vzd.scenarios_path
    return _directory(os.path.join(folder, f"{stem}.wad")).maps


def _directory(path: str) -> WadDirectory:
    """The WAD's directory; a broken WAD is a `DoomError` saying what is wrong."""
    try:
        return read_wad_file(path)
    except WadFormatError as exc:
        raise DoomError(str(exc)) from None


def local_copy(path: str) -> str:
    """`path`, or when it no longer exists, this process's copy of the same WAD (same name)."""
    if os.path.exists(path):
        return path
    with _lock:
        return _local_copies.get(os.path.basename(path), path)


def _remember(path: str) -> None:
    with _lock:
        _local_copies[os.path.basename(path)] = path
