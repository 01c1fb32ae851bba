"""Where the WADs are: `PLATFORM_WADS` and, for `s3://`, the same `PLATFORM_S3_*` settings the
recorder reads. The gateway (which stores uploads) and every env host (which copies them to a
session's folder) must name the same store."""

from __future__ import annotations

from platform_s3 import S3Settings
from pydantic_settings import SettingsConfigDict

from platform_wads.store import WadStore, open_wad_store


class WadSettings(S3Settings):
    """Every field is `PLATFORM_<NAME>`.

    Attributes:
        wads: a folder (relative to the working directory) or `s3://bucket/prefix`.
        s3_*: the S3 API of an `s3://` store (platform_s3.S3Settings, the recorder's too).
    """

    model_config = SettingsConfigDict(env_prefix="PLATFORM_", extra="ignore")

    wads: str = "./data/wads"

    def open_store(self) -> WadStore:
        """The store these settings name (see `open_wad_store`)."""
        return open_wad_store(self.wads, self.s3_endpoint, self.s3_access_key,
                              self.s3_secret_key.get_secret_value(), self.s3_region, self.s3_secure)
