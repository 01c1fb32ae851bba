"""WADs in an S3 bucket (AWS S3, MinIO, any S3 API) through the `minio` client: one PUT per
object, so each is whole or absent. Settings as the recorder's (`PLATFORM_S3_ENDPOINT`,
`PLATFORM_S3_ACCESS_KEY`, `PLATFORM_S3_SECRET_KEY`, `PLATFORM_S3_REGION`, `PLATFORM_S3_SECURE`).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from platform_wads.store import WadStoreError

_MISSING = ("NoSuchKey", "NoSuchObject", "NoSuchBucket")


class S3Backend:
    def __init__(self, client: Any, bucket: str, prefix: str, description: str) -> None:
        self.client, self.bucket, self.prefix, self.description = client, bucket, prefix, description

    @classmethod
    def open(cls, url: str, endpoint: str, access_key: str, secret_key: str, region: str, secure: bool) -> S3Backend:
        """The backend of `url` (s3://bucket/prefix); makes the bucket when missing."""
        from minio import Minio

        bucket, _, prefix = url[len("s3://") :].partition("/")
        prefix = prefix.strip("/")
        missing = [name for name, value in (("PLATFORM_S3_ENDPOINT", endpoint), ("PLATFORM_S3_ACCESS_KEY", access_key),
                                            ("PLATFORM_S3_SECRET_KEY", secret_key)) if not value]
        if not bucket or ".." in prefix.split("/"):
            raise WadStoreError(f"PLATFORM_WADS={url!r}: expected s3://bucket/prefix")
        if missing:
            raise WadStoreError(f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} required "
                                f"with PLATFORM_WADS={url}")
        host, tls = endpoint, secure
        if "://" in endpoint:
            parts = urlsplit(endpoint)
            host, tls = parts.netloc, parts.scheme == "https"
        try:
            client = Minio(host, access_key=access_key, secret_key=secret_key, secure=tls, region=region or None)
            if not client.bucket_exists(bucket):
                client.make_bucket(bucket, location=region or None)
        except Exception as exc:  # noqa: BLE001 - any failure at start is one line
            raise WadStoreError(f"PLATFORM_WADS={url}: cannot use the bucket at {host}: "
                                f"{type(exc).__name__}: {exc}") from None
        return cls(client, bucket, f"{prefix}/" if prefix else "", f"s3://{bucket}/{prefix} at {host}")

    def put_file(self, name: str, source: Path) -> None:
        self.client.fput_object(self.bucket, self.prefix + name, str(source))

    def put_bytes(self, name: str, data: bytes) -> None:
        self.client.put_object(self.bucket, self.prefix + name, io.BytesIO(data), len(data))

    def get_bytes(self, name: str) -> bytes | None:
        from minio.error import S3Error

        try:
            response = self.client.get_object(self.bucket, self.prefix + name)
        except S3Error as exc:
            if exc.code in _MISSING:
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
            if exc.code in _MISSING:
                return False
            raise
        return True

    def names(self) -> list[str]:
        found = self.client.list_objects(self.bucket, prefix=self.prefix, recursive=False)
        return sorted(obj.object_name[len(self.prefix) :] for obj in found if obj.object_name and not obj.is_dir)
