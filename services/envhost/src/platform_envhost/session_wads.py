"""A Doom session's own copy of the uploaded WAD its kwargs name.

`kwargs={"wad": "wad-…", "doom_map": "MAP01"}` names a WAD in the store (`PLATFORM_WADS`,
`platform_wads`); before the instance starts, the WAD is copied to `<run dir>/<session>.wads/`
and the environment is given that file's path. The copy goes when the instance does. An
unknown id, or a map the WAD lacks, fails the start with a message naming what exists.

Both travel in `SessionOptions.wad` and `.doom_map` (`platform_contracts.session_kwargs`); they
are read here from the instance's kwargs, which `instance_table.launch_spec` built from those
fields (a `wad` of another type than a string stays in the session's kwargs, and is refused here).
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

from platform_contracts.session_kwargs import DOOM_MAP, WAD
from platform_wads import WadNotFoundError, WadStore, WadStoreError
from platform_wads.settings import WadSettings

from platform_envhost.errors import StartFailed

DOOM_FACTORY_PREFIX = "platform_envs.doom"


class SessionWads:
    """Copies of uploaded WADs for this host's sessions, under `run_dir`."""

    def __init__(self, run_dir: Path, settings: WadSettings | None = None) -> None:
        self.run_dir = run_dir
        self._settings = settings
        self._store: WadStore | None = None

    async def localize(self, factory: str, folder_name: str, kwargs: dict[str, Any]) -> dict[str, Any]:
        """`kwargs` with an uploaded WAD's id replaced by the path of this session's copy;
        unchanged when the environment is not Doom's or names no WAD.

        Raises:
            StartFailed: "invalid_argument" for an unknown id or a missing map (naming those
                there are), "unavailable" when the store cannot be used.
        """
        wad_id = kwargs.get(WAD)
        if wad_id is None or not factory.startswith(DOOM_FACTORY_PREFIX):
            return kwargs
        if not isinstance(wad_id, str):
            raise StartFailed(f"kwargs.{WAD} must be an uploaded WAD's id (POST /v0/doom/wads), not {wad_id!r}",
                              code="invalid_argument")
        dest = self.folder(folder_name) / f"{wad_id}.wad"
        try:
            store = await asyncio.to_thread(self._open)
            record = await asyncio.to_thread(store.copy_to, wad_id, dest)
        except WadNotFoundError as exc:
            raise StartFailed(f"kwargs.{WAD}: {exc}", code="invalid_argument") from None
        except (WadStoreError, OSError) as exc:
            raise StartFailed(f"the WAD store cannot give this session {wad_id!r}: {exc}", code="unavailable") from None
        doom_map = kwargs.get(DOOM_MAP)
        if isinstance(doom_map, str) and doom_map.strip().upper() not in record.maps:
            self.remove(folder_name)
            raise StartFailed(f"kwargs.{DOOM_MAP}: the WAD {wad_id} ({record.name}) has no map {doom_map!r}; "
                              f"its maps: {', '.join(record.maps)}", code="invalid_argument")
        return {**kwargs, WAD: str(dest)}

    def folder(self, folder_name: str) -> Path:
        return self.run_dir / f"{folder_name}.wads"

    def remove(self, folder_name: str) -> None:
        """Remove a session's copies (none: nothing to do)."""
        shutil.rmtree(self.folder(folder_name), ignore_errors=True)

    def _open(self) -> WadStore:
        if self._store is None:
            self._store = (self._settings or WadSettings()).open_store()
        return self._store
