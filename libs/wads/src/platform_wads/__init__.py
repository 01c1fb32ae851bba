"""Uploaded Doom WADs: a store under `PLATFORM_WADS` (a folder or `s3://bucket/prefix`).

The gateway checks an upload (`platform_wads.wad_format`) and puts it here with its
record; env hosts copy a WAD from here to a session's own folder before its environment starts.
"""

from platform_wads.errors import WadNotFoundError, WadStoreError
from platform_wads.records import WadRecord, wad_id
from platform_wads.store import WadStore, open_wad_store

__all__ = ["WadNotFoundError", "WadRecord", "WadStore", "WadStoreError", "open_wad_store", "wad_id"]
