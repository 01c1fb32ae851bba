"""The JetStream stream every service expects, created idempotently by whoever starts first.

The stream holds a session's step events only until the recorder has written them (it deletes
them then: platform_recorder.writing.stream_trimmer), so what it holds is the recorder's backlog
plus the sessions' lifecycle and snapshot events (a few small ones a session). Its size is
bounded by `max_bytes` (PLATFORM_JETSTREAM_MAX_BYTES) with DiscardPolicy.NEW: once full it
refuses new events (nothing it holds is dropped), the env hosts hold theirs and retry, and past
their own backlog the recorded sessions' steps wait for the recorder to catch up.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from platform_contracts import subjects

log = logging.getLogger(__name__)

# A retried publish with the same Nats-Msg-Id inside this window is stored once.
DUPLICATE_WINDOW_S = 120.0
# JetStream keeps a stream on at most this many servers (PLATFORM_JETSTREAM_REPLICAS).
MAX_REPLICAS = 5
# The most the stream holds by default (PLATFORM_JETSTREAM_MAX_BYTES). A recorded CartPole step
# is about 84 bytes of the stream (a 64-environment vector run's, measured): 1 GiB holds about
# 7 minutes of such a run at 28,000 steps/s with the recorder stopped.
DEFAULT_MAX_BYTES = 1024**3
# The least it may be set to: a few of the largest messages (NATS' max payload is 1 MiB by default).
MIN_MAX_BYTES = 4 * 1024**2
# JetStream's error code for a publish refused because the stream is at its max_bytes.
STREAM_FULL_ERR_CODE = 10077


@dataclass(frozen=True)
class StreamShape:
    """How the stream is made: on how many servers of a NATS cluster it is stored (`replicas`,
    PLATFORM_JETSTREAM_REPLICAS; 1 on a single server) and the most it holds (`max_bytes`,
    PLATFORM_JETSTREAM_MAX_BYTES)."""

    replicas: int = 1
    max_bytes: int = DEFAULT_MAX_BYTES


def sessions_stream_config(shape: StreamShape = StreamShape()) -> Any:
    """The PLATFORM_SESSIONS stream's config (a nats-py StreamConfig)."""
    from nats.js.api import DiscardPolicy, StreamConfig

    return StreamConfig(
        name=subjects.SESSIONS_STREAM,
        subjects=[subjects.SESSION_EVENTS_WILDCARD],
        duplicate_window=DUPLICATE_WINDOW_S,
        num_replicas=shape.replicas,
        max_bytes=shape.max_bytes,
        discard=DiscardPolicy.NEW,
    )


async def ensure_sessions_stream(js: Any, shape: StreamShape = StreamShape()) -> None:
    """Create (or keep) the PLATFORM_SESSIONS stream on a nats-py JetStreamContext, of `shape`.
    A stream that exists is kept as it is (`apply_stream_limit` changes its limit)."""
    from nats.js.errors import BadRequestError

    try:
        await js.add_stream(sessions_stream_config(shape))
    except BadRequestError:
        # Already there with another config (e.g. created by an older version): keep it.
        await js.stream_info(subjects.SESSIONS_STREAM)


async def apply_stream_limit(js: Any, max_bytes: int) -> None:
    """Give the existing PLATFORM_SESSIONS stream the limit `max_bytes` with DiscardPolicy.NEW
    (a stream made by an older version, or with another setting, has another or none); its other
    settings, its replicas included, stay."""
    from nats.js.api import DiscardPolicy

    info = await js.stream_info(subjects.SESSIONS_STREAM)
    config = info.config
    if config.max_bytes == max_bytes and config.discard == DiscardPolicy.NEW:
        return
    log.info("stream %s: limit %s -> %d bytes, refusing new events when full (PLATFORM_JETSTREAM_MAX_BYTES)",
             subjects.SESSIONS_STREAM, "none" if (config.max_bytes or -1) < 0 else config.max_bytes, max_bytes)
    config.max_bytes = max_bytes
    config.discard = DiscardPolicy.NEW
    await js.update_stream(config)
