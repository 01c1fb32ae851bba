"""Recordings in a local folder (the default: `./recordings`; see platform_recorder.storage.interface).

Each file appears whole, by rename (temp file, fsync, rename, directory fsync), so a folder needs
no manifest: its listing is the truth. A new folder (`put_new_folder`) is written into a
temporary folder `.tmp-<name>-...` beside it and renamed into place.
"""

from __future__ import annotations

import builtins
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from platform_recorder.storage.durable_files import SyncGroup, fsync_dir, write_file_atomic, write_new_file
from platform_recorder.storage.interface import ObjectExistsError, ObjectNotFoundError, check_key

log = logging.getLogger(__name__)

TMP_PREFIX = ".tmp-"  # a new folder being written (never listed: readers skip names starting with ".")


class FolderStorage:
    """Recordings in a local folder."""

    needs_manifest = False

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).absolute()
        self.local_root: Path | None = self.root
        self.description = str(self.root)
        self._not_durable = SyncGroup()  # the `sync_folder=False` puts since the last `sync_folder`

    def path(self, key: str) -> Path:
        return self.root / check_key(key)

    def _make_parents(self, target: Path) -> None:
        """Create the missing folders above `target`, each durably (its parent fsynced)."""
        missing: list[Path] = []
        folder = target.parent
        while not folder.is_dir():
            missing.append(folder)
            folder = folder.parent
        for folder in reversed(missing):
            try:
                folder.mkdir()
            except FileExistsError:
                continue
            fsync_dir(folder.parent)

    def put_atomic(self, key: str, data: bytes | memoryview, *, sync_folder: bool = True) -> None:
        target = self.path(key)
        self._make_parents(target)
        write_file_atomic(target, data, group=None if sync_folder else self._not_durable)

    def sync_folder(self, prefix: str) -> None:
        if prefix:
            check_key(prefix)
        self._not_durable.commit()

    def put_new_folder(self, prefix: str, files: Sequence[tuple[str, bytes]]) -> None:
        target = self.path(prefix.rstrip("/"))
        if target.exists():
            raise ObjectExistsError(f"{prefix} exists in {self.description}")
        self._make_parents(target)
        tmp = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{target.name}-", dir=target.parent))
        try:
            tmp.chmod(0o755)
            for name, data in files:
                write_new_file(tmp / check_key(name), data)
            fsync_dir(tmp)
            os.rename(tmp, target)  # fails rather than replace a non-empty folder
            fsync_dir(target.parent)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    def remove_stale_temporaries(self, prefix: str, older_than: float) -> int:
        base = self.root / check_key(prefix) if prefix else self.root
        try:
            entries = [e for e in os.scandir(base) if e.name.startswith(TMP_PREFIX) and e.is_dir()]
        except (FileNotFoundError, NotADirectoryError):
            return 0
        removed = 0
        now = time.time()
        for entry in entries:
            try:
                if now - entry.stat().st_mtime >= older_than:
                    shutil.rmtree(entry.path)
                    removed += 1
            except FileNotFoundError:  # another recorder removed it meanwhile
                continue
            except OSError as exc:
                log.warning("cannot remove %s: %s", entry.path, exc)
        return removed

    def get(self, key: str) -> bytes:
        try:
            return self.path(key).read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise ObjectNotFoundError(f"no {key} in {self.description}") from None

    def get_range(self, key: str, offset: int, length: int) -> bytes:
        try:
            with open(self.path(key), "rb") as file:
                file.seek(max(0, offset))
                return file.read(max(0, length))
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise ObjectNotFoundError(f"no {key} in {self.description}") from None

    def size(self, key: str) -> int:
        path = self.path(key)
        try:
            if path.is_file():
                return path.stat().st_size
        except OSError:
            pass
        raise ObjectNotFoundError(f"no {key} in {self.description}")

    def exists(self, key: str) -> bool:
        return self.path(key).is_file()

    def list(self, prefix: str) -> list[str]:
        return sorted(self.list_sizes(prefix))

    def list_sizes(self, prefix: str) -> dict[str, int]:
        base = self.root / check_key(prefix) if prefix else self.root
        if not base.is_dir():
            return {}
        out: dict[str, int] = {}
        for path in base.rglob("*"):
            try:
                if path.is_file():
                    out[path.relative_to(self.root).as_posix()] = path.stat().st_size
            except FileNotFoundError:  # renamed or deleted while listing
                continue
        return dict(sorted(out.items()))

    def children(self, prefix: str = "", name_prefix: str = "") -> builtins.list[str]:
        base = self.root / check_key(prefix) if prefix else self.root
        try:
            entries = list(os.scandir(base))
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(e.name for e in entries if e.name.startswith(name_prefix) and e.is_dir())

    def delete_prefix(self, prefix: str) -> int:
        base = self.path(check_key(prefix).rstrip("/"))
        if not base.exists():
            return 0
        if not base.is_dir():
            base.unlink()
            return 1
        count = 0
        for manifest in base.rglob("manifest.json"):
            manifest.unlink(missing_ok=True)
            count += 1
        count += sum(1 for p in base.rglob("*") if p.is_file())
        shutil.rmtree(base)
        fsync_dir(base.parent)
        return count
