"""Recordings in an S3 bucket (AWS S3, MinIO, any S3 API) through the `minio` client.

`PLATFORM_RECORDINGS=s3://bucket/prefix` with `PLATFORM_S3_ENDPOINT` (host:port, or a URL whose
scheme sets TLS), `PLATFORM_S3_ACCESS_KEY`, `PLATFORM_S3_SECRET_KEY`, optional
`PLATFORM_S3_REGION` and `PLATFORM_S3_SECURE` (TLS, default true). Each object is written by one
PUT (up to 5 GiB), so it exists whole or not at all; S3 has no renames and no partial objects.
"""

from __future__ import annotations

import builtins
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import platform_s3
from platform_s3 import MISSING_OBJECT_CODES, S3SettingsError, S3UnavailableError, open_bucket

from platform_recorder.storage.interface import (
    ObjectExistsError,
    ObjectNotFoundError,
    StorageConfigError,
    StorageUnavailableError,
    check_key,
)

MIN_PART = 5 * 1024 * 1024  # S3's smallest multipart part: minio's lower bound for part_size
MAX_SINGLE_PUT = 5 * 1024 * 1024 * 1024  # S3's largest single PUT
MANIFEST_NAME = "manifest.json"
SETTING = "PLATFORM_RECORDINGS"


def check_s3_settings(url: str, endpoint: str, access_key: str, secret_key: str) -> None:
    """Raise StorageConfigError naming every setting an S3 storage needs and does not have
    (there is no default for them)."""
    try:
        platform_s3.check_s3_settings(url, SETTING, endpoint, access_key, secret_key)
    except S3SettingsError as exc:
        raise StorageConfigError(str(exc)) from None


def open_s3_storage(
    url: str, endpoint: str, access_key: str, secret_key: str, region: str = "", secure: bool = True
) -> S3Storage:
    """An S3Storage for `url` (`s3://bucket/prefix`); the bucket is made when missing.

    Raises:
        StorageConfigError: a missing or malformed setting (named).
        StorageUnavailableError: the endpoint cannot be reached or the bucket cannot be used.
    """
    try:
        bucket = open_bucket(url, SETTING, endpoint, access_key, secret_key, region, secure)
    except S3SettingsError as exc:
        raise StorageConfigError(str(exc)) from None
    except S3UnavailableError as exc:
        raise StorageUnavailableError(str(exc)) from None
    return S3Storage(bucket.client, bucket.name, bucket.prefix, bucket.description)


class S3Storage:
    """Keys under `prefix` in `bucket` (see platform_recorder.storage.interface.Storage)."""

    needs_manifest = True
    local_root: Path | None = None  # not a local folder

    def __init__(self, client: object, bucket: str, prefix: str, description: str) -> None:
        from minio import Minio

        assert isinstance(client, Minio)
        self.client = client
        self.bucket = bucket
        self.prefix = prefix
        self.description = description

    def _name(self, key: str) -> str:
        return self.prefix + check_key(key)

    def _folder(self, prefix: str) -> str:
        if not prefix:
            return self.prefix
        return self.prefix + check_key(prefix if prefix.endswith("/") else prefix + "/")

    def _missing(self, key: str, exc: Exception) -> Exception:
        if getattr(exc, "code", None) in MISSING_OBJECT_CODES:
            return ObjectNotFoundError(f"no {key} in {self.description}")
        return exc

    def put_atomic(self, key: str, data: bytes | memoryview, *, sync_folder: bool = True) -> None:
        size = memoryview(data).nbytes
        part_size = min(max(MIN_PART, size), MAX_SINGLE_PUT)  # one PUT up to 5 GiB
        self.client.put_object(self.bucket, self._name(key), io.BytesIO(data), size, part_size=part_size)

    def sync_folder(self, prefix: str) -> None:
        """Nothing to do: a PUT is durable when it returns."""

    def put_new_folder(self, prefix: str, files: Sequence[tuple[str, bytes]]) -> None:
        """The files PUT one by one, in order (no renames on S3: the last is the one readers trust)."""
        folder = check_key(prefix.rstrip("/"))
        if self.list_sizes(folder + "/"):
            raise ObjectExistsError(f"{folder} exists in {self.description}")
        for name, data in files:
            self.put_atomic(f"{folder}/{check_key(name)}", data)

    def remove_stale_temporaries(self, prefix: str, older_than: float) -> int:
        """None: a new folder is written in place (an interrupted one lacks its last file)."""
        return 0

    def get(self, key: str) -> bytes:
        from minio.error import S3Error

        try:
            response = self.client.get_object(self.bucket, self._name(key))
        except S3Error as exc:
            raise self._missing(key, exc) from None
        return _read_all(response)

    def get_range(self, key: str, offset: int, length: int) -> bytes:
        from minio.error import S3Error

        offset = max(0, offset)
        if length <= 0:  # minio reads to the end when length is 0
            self.size(key)
            return b""
        try:
            response = self.client.get_object(self.bucket, self._name(key), offset=offset, length=length)
        except S3Error as exc:
            if exc.code == "InvalidRange":  # at or past the end
                self.size(key)
                return b""
            raise self._missing(key, exc) from None
        return _read_all(response)

    def size(self, key: str) -> int:
        from minio.error import S3Error

        try:
            return int(self.client.stat_object(self.bucket, self._name(key)).size or 0)
        except S3Error as exc:
            raise self._missing(key, exc) from None

    def exists(self, key: str) -> bool:
        try:
            self.size(key)
        except ObjectNotFoundError:
            return False
        return True

    def list(self, prefix: str) -> list[str]:
        return sorted(self.list_sizes(prefix))

    def list_sizes(self, prefix: str) -> dict[str, int]:
        base = self._folder(prefix)
        out = {
            obj.object_name[len(self.prefix) :]: int(obj.size or 0)
            for obj in self.client.list_objects(self.bucket, prefix=base, recursive=True)
            if obj.object_name and not obj.is_dir
        }
        return dict(sorted(out.items()))

    def children(self, prefix: str = "", name_prefix: str = "") -> builtins.list[str]:
        base = self._folder(prefix)
        names = {
            obj.object_name[len(base) :].rstrip("/")
            for obj in self.client.list_objects(self.bucket, prefix=base + name_prefix, recursive=False)
            if obj.is_dir and obj.object_name
        }
        return sorted(n for n in names if n)

    def delete_prefix(self, prefix: str) -> int:
        from minio.deleteobjects import DeleteObject

        names = [self.prefix + key for key in self.list(prefix)]
        manifests = [n for n in names if n.rsplit("/", 1)[-1] == MANIFEST_NAME]
        rest = [n for n in names if n.rsplit("/", 1)[-1] != MANIFEST_NAME]
        for group in (manifests, rest):  # readers trust manifests: they go first
            if not group:
                continue
            errors = list(self.client.remove_objects(self.bucket, [DeleteObject(n) for n in group]))
            failed = [e for e in errors if getattr(e, "code", "") not in MISSING_OBJECT_CODES]
            if failed:
                raise StorageUnavailableError(
                    f"cannot delete {len(failed)} objects under {prefix} in {self.description}: "
                    f"{failed[0].code}: {failed[0].message}"
                )
        return len(names)


def _read_all(response: Any) -> bytes:
    """The body of a minio response, its connection given back to the pool."""
    try:
        return bytes(response.read())
    finally:
        response.close()
        response.release_conn()
