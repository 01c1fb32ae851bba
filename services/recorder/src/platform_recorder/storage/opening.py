"""The recordings storage a setting names: a folder, or an S3 bucket (`PLATFORM_RECORDINGS`)."""

from __future__ import annotations

import os

from platform_recorder.storage.folder import FolderStorage
from platform_recorder.storage.interface import Storage, StorageConfigError
from platform_recorder.storage.s3 import open_s3_storage


def as_storage(root: str | os.PathLike[str] | Storage) -> Storage:
    """`root` itself when it is a Storage, else a FolderStorage of that folder."""
    if isinstance(root, (str, os.PathLike)):
        return FolderStorage(root)
    return root


def storage_from_settings(
    recordings: str,
    endpoint: str = "",
    access_key: str = "",
    secret_key: str = "",
    region: str = "",
    secure: bool = True,
) -> Storage:
    """The storage `PLATFORM_RECORDINGS` names: a folder, or `s3://bucket/prefix` (then the
    `PLATFORM_S3_*` values are required, except region). Makes an S3 bucket that is missing.

    Raises:
        StorageConfigError: a value is missing or malformed (the message names the variable).
        StorageUnavailableError: the bucket cannot be used.
    """
    if not recordings.startswith("s3://"):
        if "://" in recordings:
            raise StorageConfigError(
                f"PLATFORM_RECORDINGS={recordings!r}: expected a folder or s3://bucket/prefix"
            )
        return FolderStorage(recordings)
    return open_s3_storage(recordings, endpoint, access_key, secret_key, region, secure)
