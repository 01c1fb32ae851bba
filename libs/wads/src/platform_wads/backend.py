"""What a WAD store's storage does (`Backend`): `FolderBackend` and `S3Backend` are its kinds."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol


class Backend(Protocol):
    """Where the files go: whole objects under `/`-free names."""

    description: str  # e.g. "/data/wads" or "s3://bucket/wads/ at host:port"

    def put_file(self, name: str, source: Path) -> None: ...
    def put_bytes(self, name: str, data: bytes) -> None: ...
    def get_bytes(self, name: str) -> bytes | None: ...
    def get_file(self, name: str, dest: Path) -> bool: ...
    def names(self) -> list[str]: ...
