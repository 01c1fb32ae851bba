"""The finished files of one recording in the storage, as its writer keeps them.

Order of writes (each one atomic): episode npz files (`put_episode`; in a folder they are
written without an fsync each and made durable together, by one group commit, before meta.json
names them); on an object store then manifest.json
listing the new ones; then recording.json and meta.json (`save`); then manifest.json again (the
last write of every change; see platform_recorder.manifest). So a reader trusting the manifest
never meets an episode that a trusted meta.json names but the manifest does not list, and a crash
between any two writes leaves that true; the writer's recovery redoes the rest (npz files are
written once: an existing one is kept).
"""

from __future__ import annotations

import json
import os
from typing import Any

from platform_recorder.layout import (
    MANIFEST_FILE,
    META_FILE,
    RECORDING_FILE,
    is_finished_name,
    npz_index,
    npz_name,
)
from platform_recorder.episode_lists import EpisodeLists, read_meta
from platform_recorder.manifest import encode_manifest
from platform_recorder.meta import MetaEncoder, RecordingMeta, iso_time
from platform_recorder.storage.durable_files import SyncGroup, write_unsynced
from platform_recorder.storage.interface import ObjectNotFoundError, Storage
from platform_recorder.writing.recording_json import encode_info, info_from_meta


class RecordingObjects:
    """Writes one recording's finished files through `storage` and tracks their sizes.

    Args:
        storage: the recordings storage.
        session_id: the recording's id (its folder / key prefix).
        sizes: finished files already in the storage (name -> size).
    """

    def __init__(self, storage: Storage, session_id: str, sizes: dict[str, int] | None = None) -> None:
        self.storage = storage
        self.session_id = session_id
        self.prefix = f"{session_id}/"
        self.sizes: dict[str, int] = dict(sizes or {})
        self.episodes: set[int] = {i for i in map(npz_index, self.sizes) if i is not None}
        self._unlisted = bool(self.sizes)  # files the manifest may not list yet
        self._unsynced = False  # npz renames in a folder not yet made durable
        self._meta_encoder = MetaEncoder()
        self.lists = EpisodeLists()  # its sealed episode lists (platform_recorder.episode_lists)

    @classmethod
    def load(
        cls, storage: Storage, session_id: str
    ) -> tuple[RecordingMeta, dict[str, Any], RecordingObjects] | None:
        """(meta.json, recording.json, the objects) of a recording in the storage; None without a
        meta.json (read straight from the storage, the writer's own state: no manifest check). One
        listing finds its episode files (a crash may have left some unlisted).

        Raises:
            InvalidMetaError: its meta.json is not a recording's.
        """
        try:
            meta, lists = read_meta(storage, session_id, storage.get(f"{session_id}/{META_FILE}"))
        except ObjectNotFoundError:
            return None
        prefix = f"{session_id}/"
        sizes = {
            key[len(prefix) :]: size
            for key, size in storage.list_sizes(prefix).items()
            if is_finished_name(key[len(prefix) :])
        }
        objects = cls(storage, session_id, sizes)
        objects.lists = lists
        try:
            info = _decode(storage.get(objects.key(RECORDING_FILE)))
        except (ObjectNotFoundError, ValueError, TypeError):
            info = info_from_meta(meta)
        return meta, info, objects

    def key(self, name: str) -> str:
        return self.prefix + name

    def has_episode(self, index: int) -> bool:
        """The episode's npz is in the storage (whole)."""
        return index in self.episodes

    def put_episode(self, index: int, data: bytes | memoryview) -> str:
        """Write episode `index`'s npz (durable, in a folder, once `save` runs: until then an OS
        crash may leave it torn, and `Recording.load` writes it again); its file name."""
        name = npz_name(index)
        self.storage.put_atomic(self.key(name), data, sync_folder=False)
        self.sizes[name] = memoryview(data).nbytes
        self.episodes.add(index)
        self._unsynced = self._unlisted = True
        return name

    def save(self, meta: RecordingMeta | None = None, info: dict[str, Any] | None = None) -> None:
        """Write recording.json (`info`) and/or meta.json (`meta`, stamped `updated_at`), after
        making the episode files they may name durable (a folder) or listed (an object store);
        then the manifest (object stores)."""
        if meta is not None:
            self.lists.seal(meta.episodes, self._put_list)
        if self._unsynced:
            self.storage.sync_folder(self.prefix)
            self._unsynced = False
        if self.storage.needs_manifest and self._unlisted and META_FILE in self.sizes:
            self.write_manifest()  # the new episode files, before a meta.json names them
        if info is not None:
            data = encode_info(info)
            self.storage.put_atomic(self.key(RECORDING_FILE), data)
            self.sizes[RECORDING_FILE] = len(data)
        if meta is not None:
            meta.updated_at = iso_time()
            data = self._meta_encoder.encode(self.lists.file_body(meta))
            self.storage.put_atomic(self.key(META_FILE), data)
            self.sizes[META_FILE] = len(data)
        if self.storage.needs_manifest:
            self.write_manifest()

    def stage(self, meta: RecordingMeta | None = None, info: dict[str, Any] | None = None,
              group: SyncGroup | None = None) -> list[tuple[str, str]]:
        """`save`, in two steps for a folder storage (see platform_recorder.writing.meta_batches):
        write the new recording.json and meta.json into temporary files added to `group` (not
        yet durable, not yet in place) and return them (temporary path, path) for `publish`,
        which renames them once the group and the storage's pending episode files are
        committed. An object store: written now (`save`), nothing returned."""
        root = self.storage.local_root
        if root is None or group is None:
            self.save(meta=meta, info=info)
            return []
        staged: list[tuple[str, str]] = []
        if info is not None:
            data = encode_info(info)
            staged.append(self._stage_file(root, RECORDING_FILE, data, group))
        if meta is not None:
            self.lists.seal(meta.episodes, self._put_list)
            meta.updated_at = iso_time()
            data = self._meta_encoder.encode(self.lists.file_body(meta))
            staged.append(self._stage_file(root, META_FILE, data, group))
        self._unsynced = False  # the batch syncs the storage's pending files before publishing
        return staged

    def _put_list(self, name: str, data: bytes) -> None:
        """A sealed episode list: durable (a folder) or listed (an object store) before the
        meta.json that names it, as an episode file."""
        self.storage.put_atomic(self.key(name), data, sync_folder=False)
        self.sizes[name] = len(data)
        self._unsynced = self._unlisted = True

    def _stage_file(self, root: Any, name: str, data: bytes, group: SyncGroup) -> tuple[str, str]:
        target = os.fspath(root / self.key(name))
        tmp = target + ".tmp"
        write_unsynced(tmp, data)
        group.add_file(tmp)
        self.sizes[name] = len(data)
        return tmp, target

    def publish(self, staged: list[tuple[str, str]], group: SyncGroup) -> None:
        """Rename `stage`d files into place; the renames are durable once `group` is committed."""
        for tmp, target in staged:
            os.replace(tmp, target)
            group.add_file(target)

    def write_manifest(self) -> None:
        """manifest.json: every finished file of the recording (meta.json, recording.json, the
        episode files), with its size."""
        self.storage.put_atomic(self.key(MANIFEST_FILE), encode_manifest(self.sizes))
        self._unlisted = False


def _decode(data: bytes) -> dict[str, Any]:
    body = json.loads(data)
    if not isinstance(body, dict):
        raise TypeError("recording.json is not a JSON object")
    return body
