"""The platform's SQL database: `PLATFORM_DATABASE_URL` (SQLite or PostgreSQL) opened with an
async driver (`open_engine`), and its tables made (`create_tables`, with `add_missing_columns`
for a table an older version made) with one-line errors."""

from platform_database.engines import DatabaseUnavailableError, add_missing_columns, create_tables, open_engine
from platform_database.urls import ASYNC_DRIVERS, DatabaseUrlError, async_database_url, redact

__all__ = [
    "ASYNC_DRIVERS",
    "DatabaseUnavailableError",
    "DatabaseUrlError",
    "add_missing_columns",
    "async_database_url",
    "create_tables",
    "open_engine",
    "redact",
]
