"""WADs in a local folder: each file written under a temporary name, then renamed into place."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from platform_wads.errors import WadStoreError


class FolderBackend:
    def __init__(self, root: Path) -> None:
        self.root = root.expanduser()
        self.description = str(self.root)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise WadStoreError(f"PLATFORM_WADS={self.description!r}: cannot make the folder: {exc}") from None

    def put_file(self, name: str, source: Path) -> None:
        with open(source, "rb") as file:
            self._write(name, lambda out: shutil.copyfileobj(file, out, 1 << 20))

    def put_bytes(self, name: str, data: bytes) -> None:
        self._write(name, lambda out: out.write(data))

    def get_bytes(self, name: str) -> bytes | None:
        try:
            return (self.root / name).read_bytes()
        except FileNotFoundError:
            return None

    def get_file(self, name: str, dest: Path) -> bool:
        try:
            shutil.copyfile(self.root / name, dest)
        except FileNotFoundError:
            return False
        return True

    def names(self) -> list[str]:
        return sorted(entry.name for entry in self.root.iterdir() if not entry.name.startswith("."))

    def _write(self, name: str, fill: object) -> None:
        fd, temporary = tempfile.mkstemp(prefix=f".{name}.", dir=self.root)
        try:
            with os.fdopen(fd, "wb") as out:
                fill(out)  # type: ignore[operator]
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, self.root / name)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
