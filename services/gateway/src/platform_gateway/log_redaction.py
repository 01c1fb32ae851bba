"""Tokens never reach the logs: uvicorn logs each WebSocket's path with its query, where a
browser's token travels (`?token=`, a browser cannot set headers on a WebSocket)."""

from __future__ import annotations

import logging
import re

_TOKEN_IN_QUERY = re.compile(r"([?&]token=)[^&\s\"']+")
# The loggers uvicorn writes request lines to.
UVICORN_LOGGERS = ("uvicorn.error", "uvicorn.access")


def redact(text: str) -> str:
    """`text` with every `token=` query value replaced by `***`."""
    return _TOKEN_IN_QUERY.sub(r"\1***", text)


class TokenRedaction(logging.Filter):
    """Rewrites a record whose message holds a `token=` query value; keeps every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


def install() -> None:
    """Put the filter on uvicorn's loggers (after uvicorn configured its logging)."""
    for name in UVICORN_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, TokenRedaction) for f in logger.filters):
            logger.addFilter(TokenRedaction())
