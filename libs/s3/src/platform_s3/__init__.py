"""An S3 bucket (AWS S3, MinIO, any S3 API) named by a setting such as
`PLATFORM_RECORDINGS=s3://bucket/prefix`, with the shared `PLATFORM_S3_*` settings."""

from platform_s3.bucket import (
    MISSING_OBJECT_CODES,
    S3Bucket,
    S3SettingsError,
    S3UnavailableError,
    check_s3_settings,
    open_bucket,
    parse_s3_url,
)
from platform_s3.settings import S3Settings

__all__ = [
    "MISSING_OBJECT_CODES",
    "S3Bucket",
    "S3Settings",
    "S3SettingsError",
    "S3UnavailableError",
    "check_s3_settings",
    "open_bucket",
    "parse_s3_url",
]
