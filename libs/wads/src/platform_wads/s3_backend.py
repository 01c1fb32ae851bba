"""WADs in an S3 bucket (AWS S3, MinIO, any S3 API) through the `minio` client (opened by
platform_s3 from the `PLATFORM_S3_*` settings the recorder reads too): one PUT per object, so
each is whole or absent.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from platform_s3 import MISSING_OBJECT_CODES, S3SettingsError, S3UnavailableError, open_bucket

from platform_wads.errors import WadStoreError


class S3Backend:
    def __init__(self, client: Any, bucket: str, prefix: str, description: str) -> None:
        self.client, self.bucket, self.prefix, self.description = client, bucket, prefix, description

    @classmethod
    def open(cls, url: str, endpoint: str, access_key: str, secret_key: str, region: str, secure: bool) -> S3Backend:
        """The backend of `url` (s3://bucket/prefix); makes the bucket when missing."""
        try:
            bucket = open_bucket(url, "PLATFORM_WADS", endpoint, access_key, secret_key, region, secure)
        except S3SettingsError as exc:
            raise WadStoreError(str(exc)) from None
        except S3UnavailableError as exc:
            raise WadStoreError(f"PLATFORM_WADS={url}: {exc}") from None
        return cls(bucket.client, bucket.name, bucket.prefix, bucket.description)

    def put_file(self, name: str, source: Path) -> None:
        self.client.fput_object(self.bucket, self.prefix + name, str(source))

    def put_bytes(self, name: str, data: bytes) -> None:
        self.client.put_object(self.bucket, self.prefix + name, io.BytesIO(data), len(data))

    def get_bytes(self, name: str) -> bytes | None:
        from minio.error import S3Error

        try:
            response = self.client.get_object(self.bucket, self.prefix + name)
        except S3Error as exc:
            if exc.code in MISSING_OBJECT_CODES:
                return None
            raise
        try:
            return bytes(response.read())
        finally:
            response.close()
            response.release_conn()

    def get_file(self, name: str, dest: Path) -> bool:
        from minio.error import S3Error

        try:
            self.client.fget_object(self.bucket, self.prefix + name, str(dest))
        except S3Error as exc:
            if exc.code in MISSING_OBJECT_CODES:
                return False
            raise
        return True

    def names(self) -> list[str]:
        found = self.client.list_objects(self.bucket, prefix=self.prefix, recursive=False)
        return sorted(obj.object_name[len(self.prefix) :] for obj in found if obj.object_name and not obj.is_dir)
