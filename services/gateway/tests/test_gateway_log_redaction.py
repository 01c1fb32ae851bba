"""No token in the gateway's log lines: uvicorn's WebSocket lines carry the query (`?token=`)."""

from __future__ import annotations

import logging

import pytest
from platform_gateway import log_redaction


def test_a_token_in_a_websocket_line_is_replaced(caplog: pytest.LogCaptureFixture) -> None:
    log_redaction.install()
    log_redaction.install()  # once is enough: no second filter
    logger = logging.getLogger("uvicorn.error")
    assert sum(isinstance(f, log_redaction.TokenRedaction) for f in logger.filters) == 1
    with caplog.at_level(logging.INFO, logger="uvicorn.error"):
        logger.info('%s - "WebSocket %s" [accepted]', "127.0.0.1:1",
                    "/v0/sessions/s-1/stream?observation=digest&token=sim_SECRETvalue123&x=1")
        logger.info("no token here: %s", "/v0/sessions/s-1/stream")
    assert [r.getMessage() for r in caplog.records] == [
        '127.0.0.1:1 - "WebSocket /v0/sessions/s-1/stream?observation=digest&token=***&x=1" [accepted]',
        "no token here: /v0/sessions/s-1/stream",
    ]
    assert log_redaction.redact("GET /?token=abc") == "GET /?token=***"
