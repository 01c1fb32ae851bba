"""The accepted `PLATFORM_DATABASE_URL` schemes and the async driver each is opened with."""

from __future__ import annotations

from sqlalchemy.engine import make_url

ASYNC_DRIVERS: dict[str, str] = {
    "sqlite": "sqlite+aiosqlite",
    "sqlite+aiosqlite": "sqlite+aiosqlite",
    "postgresql": "postgresql+asyncpg",
    "postgres": "postgresql+asyncpg",
    "postgresql+asyncpg": "postgresql+asyncpg",
    "postgresql+psycopg": "postgresql+asyncpg",
}
"""Each accepted scheme of PLATFORM_DATABASE_URL and the async driver it is opened with (the same
database either way: the driver is the services' business, not the URL's)."""


class DatabaseUrlError(ValueError):
    """A PLATFORM_DATABASE_URL that is not supported; the message names the accepted schemes."""


def async_database_url(url: str) -> str:
    """The URL with its async driver (see `ASYNC_DRIVERS`): `sqlite:///platform.db` ->
    `sqlite+aiosqlite:///platform.db`, `postgresql+psycopg://...` -> `postgresql+asyncpg://...`.
    A libpq `sslmode` query parameter becomes asyncpg's `ssl` (same values).

    Raises:
        DatabaseUrlError: one line naming the accepted schemes, for any other scheme or no URL.
    """
    scheme, sep, rest = url.partition("://")
    driver = ASYNC_DRIVERS.get(scheme.lower()) if sep else None
    if driver is None:
        raise DatabaseUrlError(f"PLATFORM_DATABASE_URL {redact(url)!r} is not supported: use one of "
                               f"{', '.join(name + '://' for name in ASYNC_DRIVERS)} (e.g. sqlite:///platform.db "
                               "or postgresql+psycopg://user@host/db)")
    converted = f"{driver}://{rest}"
    if driver == "postgresql+asyncpg" and "sslmode=" in rest:
        parsed = make_url(converted)
        query = dict(parsed.query)
        query["ssl"] = query.pop("sslmode")
        converted = parsed.set(query=query).render_as_string(hide_password=False)
    return converted


def redact(url: str) -> str:
    """`url` with its password hidden, for messages."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - not even a URL: show it, it has no parseable password
        return url
