"""Settings of the evals service (environment variables, prefix `PLATFORM_`)."""

from __future__ import annotations

from platform_s3 import S3Settings
from pydantic import Field
from platform_contracts.log_lines import LogFormat
from pydantic_settings import SettingsConfigDict


class Settings(S3Settings):
    """Attributes:
        nats_url: the NATS servers (comma-separated).
        database_url: the platform's SQL database, where the `evals` and `eval_samples` tables live.
        recordings: the recordings storage (PLATFORM_RECORDINGS: a folder or s3://bucket/prefix
            with the PLATFORM_S3_* settings): the evals' `.eval` logs go under `evals/<id>/`.
        evals_poll_interval: seconds between two reads of a running eval's experiment
            (PLATFORM_EVALS_POLL_INTERVAL).
    """

    model_config = SettingsConfigDict(env_prefix="PLATFORM_", extra="ignore")
    # How its log lines are written: text, or json (one JSON object per line; platform_contracts.log_lines).
    log_format: LogFormat = "text"

    nats_url: str = "nats://127.0.0.1:4222"
    database_url: str = "sqlite+aiosqlite:///./data/platform.db"
    recordings: str = "./recordings"
    evals_poll_interval: float = Field(1.0, gt=0)

    @property
    def nats_servers(self) -> list[str]:
        return [url.strip() for url in self.nats_url.split(",") if url.strip()]
