"""The `PLATFORM_S3_*` settings, one set for everything the platform keeps in S3 (recordings,
WADs): a settings class that stores something there inherits them."""

from __future__ import annotations

from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class S3Settings(BaseSettings):
    """Attributes:
    s3_endpoint: the S3 API, host:port or http(s)://host:port (PLATFORM_S3_ENDPOINT).
    s3_access_key, s3_secret_key: its credentials (PLATFORM_S3_ACCESS_KEY, PLATFORM_S3_SECRET_KEY).
    s3_region: the bucket's region, e.g. us-east-1 (PLATFORM_S3_REGION; empty: asked of S3).
    s3_secure: TLS to the endpoint (PLATFORM_S3_SECURE, default true; a scheme in the endpoint wins).
    """

    model_config = SettingsConfigDict(env_prefix="PLATFORM_", extra="ignore")

    s3_endpoint: str = ""
    s3_access_key: str = ""
    s3_secret_key: SecretStr = SecretStr("")
    s3_region: str = ""
    s3_secure: bool = True
