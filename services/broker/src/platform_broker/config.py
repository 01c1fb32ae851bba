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
        database_url: URL of the session table: `sqlite:///path` or `postgresql+psycopg://...`,
            or any other scheme of `ASYNC_DRIVERS` (opened with aiosqlite or asyncpg).
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


ASYNC_DRIVERS: dict[str, str] = {
    "sqlite": "sqlite+aiosqlite",
    "sqlite+aiosqlite": "sqlite+aiosqlite",
    "postgresql": "postgresql+asyncpg",
    "postgres": "postgresql+asyncpg",
    "postgresql+asyncpg": "postgresql+asyncpg",
    "postgresql+psycopg": "postgresql+asyncpg",
}
"""Each accepted scheme of PLATFORM_DATABASE_URL and the async driver the broker opens it with
(the same database either way: the driver is the broker's business, not the URL's)."""


def async_database_url(url: str) -> str:
    """The URL with the broker's async driver (see `ASYNC_DRIVERS`): `sqlite:///platform.db` ->
    `sqlite+aiosqlite:///platform.db`, `postgresql+psycopg://...` -> `postgresql+asyncpg://...`.
    A libpq `sslmode` query parameter becomes asyncpg's `ssl` (same values).

    Raises:
        ConfigError: one line naming the accepted schemes, for any other scheme or no URL.
    """
    scheme, sep, rest = url.partition("://")
    driver = ASYNC_DRIVERS.get(scheme.lower()) if sep else None
    if driver is None:
        raise ConfigError(f"PLATFORM_DATABASE_URL {_redact(url)!r} is not supported: use one of "
                          f"{', '.join(name + '://' for name in ASYNC_DRIVERS)} (e.g. sqlite:///platform.db "
                          "or postgresql+psycopg://user@host/db)")
    converted = f"{driver}://{rest}"
    if driver == "postgresql+asyncpg" and "sslmode=" in rest:
        parsed = make_url(converted)
        query = dict(parsed.query)
        query["ssl"] = query.pop("sslmode")
        converted = parsed.set(query=query).render_as_string(hide_password=False)
    return converted


def _redact(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - not even a URL: show it, it has no parseable password
        return url
