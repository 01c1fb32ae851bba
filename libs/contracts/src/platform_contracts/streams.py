"""The JetStream stream every service expects, created idempotently by whoever starts first."""

from __future__ import annotations

from typing import Any

from platform_contracts import subjects

# A retried publish with the same Nats-Msg-Id inside this window is stored once.
DUPLICATE_WINDOW_S = 120.0


async def ensure_sessions_stream(js: Any) -> None:
    """Create (or keep) the PLATFORM_SESSIONS stream on a nats-py JetStreamContext."""
    from nats.js.api import StreamConfig
    from nats.js.errors import BadRequestError

    config = StreamConfig(
        name=subjects.SESSIONS_STREAM,
        subjects=[subjects.SESSION_EVENTS_WILDCARD],
        duplicate_window=DUPLICATE_WINDOW_S,
    )
    try:
        await js.add_stream(config)
    except BadRequestError:
        # Already there with another config (e.g. created by an older version): keep it.
        await js.stream_info(subjects.SESSIONS_STREAM)
