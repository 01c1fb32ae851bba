"""The broker's settings, from `PLATFORM_*` environment variables."""

from __future__ import annotations

from pathlib import Path

from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine import make_url

from platform_broker.errors import ConfigError

DEFAULT_CATALOG = Path("catalog.toml")


class Settings(BaseSettings):
    """Settings of the broker (env prefix `PLATFORM_`).

    Attributes:
        nats_url: the NATS server.
        database_url: SQLAlchemy URL of the session table: `sqlite+aiosqlite:///path` or
            `postgresql+asyncpg://...` (`postgresql://` and `postgres://` are mapped to asyncpg).
        idle_timeout: seconds without a request after which a session is stopped; 0 = never.
        catalog: path of a catalog.toml; unset = `./catalog.toml` when that file exists.
        start_timeout: seconds to wait for an env host to start an instance.
        pools: warm instances to keep per environment, e.g. "cartpole=2,pong=1" (see
            `platform_broker.pools.parse_pools`); empty = none.
    """

    model_config = SettingsConfigDict(env_prefix="PLATFORM_", extra="ignore")

    nats_url: str = "nats://127.0.0.1:4222"
    database_url: str = "sqlite+aiosqlite:///./data/platform.db"
    idle_timeout: float = 1800.0
    catalog: Path | None = None
    start_timeout: float = 60.0
    pools: str = ""

    def catalog_path(self) -> Path | None:
        """The catalog file to load, or None for the built-ins only."""
        if self.catalog is not None:
            return self.catalog
        return DEFAULT_CATALOG if DEFAULT_CATALOG.is_file() else None


def async_database_url(url: str) -> str:
    """The URL with an async driver: `postgresql://` -> `postgresql+asyncpg://`, `sqlite://` -> aiosqlite.

    Raises:
        ConfigError: the URL is not SQLite or PostgreSQL, or cannot be parsed.
    """
    for plain in ("postgresql://", "postgres://"):
        if url.startswith(plain):
            return "postgresql+asyncpg://" + url[len(plain):]
    if url.startswith("sqlite://"):
        return "sqlite+aiosqlite://" + url[len("sqlite://"):]
    if url.startswith(("postgresql+asyncpg://", "sqlite+aiosqlite://")):
        return url
    raise ConfigError(
        f"PLATFORM_DATABASE_URL {_redact(url)!r} is not supported: use sqlite+aiosqlite:///path "
        "or postgresql+asyncpg://user@host/db"
    )


def _redact(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - not even a URL: show it, it has no parseable password
        return url
