"""The broker's settings, from `PLATFORM_*` environment variables."""

from __future__ import annotations

from pathlib import Path

from platform_bus.stream_settings import SessionsStreamFields
from platform_database import ASYNC_DRIVERS, DatabaseUrlError
from platform_database import async_database_url as _async_database_url
from platform_contracts.log_lines import LogFormat
from pydantic_settings import BaseSettings, SettingsConfigDict

from platform_broker.errors import ConfigError

DEFAULT_CATALOG = Path("catalog.toml")
__all__ = ["ASYNC_DRIVERS", "DEFAULT_CATALOG", "Settings", "async_database_url"]


class Settings(BaseSettings, SessionsStreamFields):
    """Settings of the broker (env prefix `PLATFORM_`).

    Attributes:
        nats_url: the NATS server.
        database_url: URL of the session table: `sqlite:///path` or `postgresql+psycopg://...`,
            or any other scheme of `platform_database.ASYNC_DRIVERS` (opened with aiosqlite or asyncpg).
        idle_timeout: seconds without a request after which a session is stopped; 0 = never.
        catalog: path of a catalog.toml; unset = `./catalog.toml` when that file exists.
        start_timeout: seconds to wait for an env host to start an instance.
        pools: warm instances to keep per environment, e.g. "cartpole=2,pong=1" (see
            `platform_broker.pools.parse_pools`); empty = none.
        durable_steps: every recorded session is durable: a step is answered only once its event
            is stored in JetStream (`SessionOptions.durable`; a session may ask for it itself).
    """

    model_config = SettingsConfigDict(env_prefix="PLATFORM_", extra="ignore")
    # How its log lines are written: text, or json (one JSON object per line; platform_contracts.log_lines).
    log_format: LogFormat = "text"

    nats_url: str = "nats://127.0.0.1:4222"
    database_url: str = "sqlite+aiosqlite:///./data/platform.db"
    idle_timeout: float = 1800.0
    catalog: Path | None = None
    start_timeout: float = 60.0
    pools: str = ""
    durable_steps: bool = False
    # jetstream_replicas, jetstream_max_bytes: from SessionsStreamFields

    def catalog_path(self) -> Path | None:
        """The catalog file to load, or None for the built-ins only."""
        if self.catalog is not None:
            return self.catalog
        return DEFAULT_CATALOG if DEFAULT_CATALOG.is_file() else None


def async_database_url(url: str) -> str:
    """`platform_database.async_database_url`, its error as the broker's ConfigError."""
    try:
        return _async_database_url(url)
    except DatabaseUrlError as exc:
        raise ConfigError(str(exc)) from None
