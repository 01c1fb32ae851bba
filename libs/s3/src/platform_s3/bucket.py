"""Opening the bucket of an `s3://bucket/prefix` setting through the `minio` client.

Every error names the variable to fix: `setting` is the name of the variable that holds the URL
(`PLATFORM_RECORDINGS`, `PLATFORM_WADS`), the endpoint and credentials are `PLATFORM_S3_*`."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

MISSING_OBJECT_CODES = ("NoSuchKey", "NoSuchObject", "NoSuchBucket")


class S3SettingsError(ValueError):
    """A missing or malformed S3 setting; the message names the variable."""


class S3UnavailableError(RuntimeError):
    """The endpoint cannot be reached, or the bucket cannot be used."""


@dataclass(frozen=True)
class S3Bucket:
    """A minio client, the bucket and the key prefix (`""` or ending in `/`) a setting names."""

    client: Any
    name: str
    prefix: str
    description: str  # s3://bucket/prefix at host:port, for messages


def parse_s3_url(url: str, setting: str) -> tuple[str, str]:
    """`s3://bucket/some/prefix` -> ("bucket", "some/prefix/"); ("bucket", "") without a prefix."""
    bucket, _, prefix = url[len("s3://") :].partition("/")
    prefix = prefix.strip("/")
    if not bucket:
        raise S3SettingsError(f"{setting}={url!r}: no bucket; expected s3://bucket/prefix")
    if prefix and any(part in ("", ".", "..") for part in prefix.split("/")):
        raise S3SettingsError(f"{setting}={url!r}: the prefix {prefix!r} has an empty, '.' or '..' part")
    return bucket, f"{prefix}/" if prefix else ""


def check_s3_settings(url: str, setting: str, endpoint: str, access_key: str, secret_key: str) -> None:
    """Raise S3SettingsError naming every setting the bucket of `url` needs and does not have
    (there is no default for them)."""
    given = (("PLATFORM_S3_ENDPOINT", endpoint), ("PLATFORM_S3_ACCESS_KEY", access_key),
             ("PLATFORM_S3_SECRET_KEY", secret_key))
    missing = [name for name, value in given if not value]
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        raise S3SettingsError(f"{' and '.join(missing)} {verb} required with {setting}={url}")


def open_bucket(url: str, setting: str, endpoint: str, access_key: str, secret_key: str, region: str = "",
                secure: bool = True) -> S3Bucket:
    """The bucket of `url` (`s3://bucket/prefix`), made when missing.

    Raises:
        S3SettingsError: a missing or malformed setting (named).
        S3UnavailableError: the endpoint cannot be reached or the bucket cannot be used.
    """
    from minio import Minio
    from minio.helpers import check_bucket_name

    name, prefix = parse_s3_url(url, setting)
    check_s3_settings(url, setting, endpoint, access_key, secret_key)
    host, tls = _endpoint(endpoint, secure)
    try:
        check_bucket_name(name, strict=True)
    except ValueError as exc:
        raise S3SettingsError(f"{setting}={url!r}: {exc}") from None
    try:
        client = Minio(host, access_key=access_key, secret_key=secret_key, secure=tls, region=region or None,
                       http_client=_http_client())
    except ValueError as exc:
        raise S3SettingsError(f"PLATFORM_S3_ENDPOINT={endpoint!r}: {exc}") from None
    bucket = S3Bucket(client, name, prefix, f"s3://{name}/{prefix} at {host}")
    _ensure_bucket(bucket, region)
    return bucket


def _endpoint(endpoint: str, secure: bool) -> tuple[str, bool]:
    """host:port and TLS from `PLATFORM_S3_ENDPOINT` (a scheme, when given, decides TLS)."""
    if "://" not in endpoint:
        return endpoint.rstrip("/"), secure
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path.strip("/"):
        raise S3SettingsError(
            f"PLATFORM_S3_ENDPOINT={endpoint!r}: expected host:port or http(s)://host:port, without a path"
        )
    return parts.netloc, parts.scheme == "https"


def _http_client() -> Any:
    """Bounded connects and reads, and a few retries of a server error (minio's default waits
    minutes on an endpoint that does not answer)."""
    import certifi
    import urllib3

    return urllib3.PoolManager(
        timeout=urllib3.Timeout(connect=5.0, read=60.0),
        maxsize=16,
        cert_reqs="CERT_REQUIRED",
        ca_certs=os.environ.get("SSL_CERT_FILE") or certifi.where(),
        retries=urllib3.Retry(total=3, backoff_factor=0.2, status_forcelist=[500, 502, 503, 504]),
    )


def _ensure_bucket(bucket: S3Bucket, region: str) -> None:
    from minio.error import S3Error

    try:
        if not bucket.client.bucket_exists(bucket.name):
            try:
                bucket.client.make_bucket(bucket.name, location=region or None)
            except S3Error as exc:
                if exc.code not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
                    raise
    except Exception as exc:  # noqa: BLE001 - any failure at start is one line
        raise S3UnavailableError(f"cannot use the bucket of {bucket.description}: {type(exc).__name__}: {exc}") from None
