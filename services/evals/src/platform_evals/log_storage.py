"""Where an eval's `.eval` logs are kept once brought back: the recordings storage
(`PLATFORM_RECORDINGS`, a folder or `s3://bucket/prefix` with the `PLATFORM_S3_*` settings),
under `evals/<eval id>/<log name>`; read back whole (for the import) or by byte range (the
gateway's log route)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Protocol

from platform_s3 import MISSING_OBJECT_CODES, S3SettingsError, S3UnavailableError, open_bucket

from platform_evals.config import Settings
from platform_evals.errors import EvalNotFoundError, EvalUnavailableError


class LogStorage(Protocol):
    def put(self, eval_id: str, name: str, source: Path) -> None: ...

    def size(self, eval_id: str, name: str) -> int: ...

    def read(self, eval_id: str, name: str, offset: int, length: int) -> bytes: ...

    def fetch(self, eval_id: str, name: str, dest: Path) -> None: ...


def _key(eval_id: str, name: str) -> str:
    if "/" in name or name in ("", ".", "..") or "/" in eval_id:
        raise EvalNotFoundError(f"eval '{eval_id}' has no log {name!r}")
    return f"evals/{eval_id}/{name}"


class FolderLogs:
    def __init__(self, root: Path) -> None:
        self.root = root

    def put(self, eval_id: str, name: str, source: Path) -> None:
        dest = self.root / _key(eval_id, name)
        dest.parent.mkdir(parents=True, exist_ok=True)
        partial = dest.with_name(dest.name + ".part")
        shutil.copyfile(source, partial)
        with partial.open("rb") as written:
            os.fsync(written.fileno())
        partial.replace(dest)

    def _path(self, eval_id: str, name: str) -> Path:
        path = self.root / _key(eval_id, name)
        if not path.is_file():
            raise EvalNotFoundError(f"eval '{eval_id}' has no log {name!r}")
        return path

    def size(self, eval_id: str, name: str) -> int:
        return self._path(eval_id, name).stat().st_size

    def read(self, eval_id: str, name: str, offset: int, length: int) -> bytes:
        with self._path(eval_id, name).open("rb") as source:
            source.seek(offset)
            return source.read(length)

    def fetch(self, eval_id: str, name: str, dest: Path) -> None:
        shutil.copyfile(self._path(eval_id, name), dest)


class S3Logs:
    def __init__(self, client: Any, bucket: str, prefix: str) -> None:
        self.client, self.bucket, self.prefix = client, bucket, prefix

    def put(self, eval_id: str, name: str, source: Path) -> None:
        self.client.fput_object(self.bucket, self.prefix + _key(eval_id, name), str(source))

    def _missing(self, exc: Exception, eval_id: str, name: str) -> Exception:
        from minio.error import S3Error

        if isinstance(exc, S3Error) and exc.code in MISSING_OBJECT_CODES:
            return EvalNotFoundError(f"eval '{eval_id}' has no log {name!r}")
        return EvalUnavailableError(f"the recordings storage cannot be read: {type(exc).__name__}: {exc}")

    def size(self, eval_id: str, name: str) -> int:
        key = self.prefix + _key(eval_id, name)
        try:
            return int(self.client.stat_object(self.bucket, key).size)
        except Exception as exc:  # noqa: BLE001 - said as missing or unavailable
            raise self._missing(exc, eval_id, name) from None

    def read(self, eval_id: str, name: str, offset: int, length: int) -> bytes:
        key = self.prefix + _key(eval_id, name)
        try:
            response = self.client.get_object(self.bucket, key, offset=offset, length=length)
        except Exception as exc:  # noqa: BLE001 - said as missing or unavailable
            raise self._missing(exc, eval_id, name) from None
        try:
            return bytes(response.read())
        finally:
            response.close()
            response.release_conn()

    def fetch(self, eval_id: str, name: str, dest: Path) -> None:
        key = self.prefix + _key(eval_id, name)
        try:
            self.client.fget_object(self.bucket, key, str(dest))
        except Exception as exc:  # noqa: BLE001 - said as missing or unavailable
            raise self._missing(exc, eval_id, name) from None


def open_log_storage(settings: Settings) -> LogStorage:
    """Raises ValueError (one line naming the setting) when the storage cannot be used."""
    where = settings.recordings
    if not where.startswith("s3://"):
        return FolderLogs(Path(where).expanduser())
    try:
        bucket = open_bucket(where, "PLATFORM_RECORDINGS", settings.s3_endpoint, settings.s3_access_key,
                             settings.s3_secret_key.get_secret_value(), settings.s3_region, settings.s3_secure)
    except (S3SettingsError, S3UnavailableError) as exc:
        raise ValueError(str(exc)) from None
    return S3Logs(bucket.client, bucket.name, bucket.prefix)
