"""The sessions stream's two settings, read by each service that may create the stream (the env
host, the broker, the recorder): whichever creates it first sets them
(platform_contracts.streams.ensure_sessions_stream); the recorder, which owns the backlog, also
gives an existing stream its limit (`apply_stream_limit`)."""

from __future__ import annotations

from platform_contracts.streams import DEFAULT_MAX_BYTES, MAX_REPLICAS, MIN_MAX_BYTES, StreamShape
from pydantic import BaseModel, Field


class SessionsStreamFields(BaseModel):
    """For a `PLATFORM_`-prefixed settings class to inherit.

    Attributes:
        jetstream_replicas: on how many NATS servers the stream is stored, 1 to 5
            (`PLATFORM_JETSTREAM_REPLICAS`; a cluster of three: 3).
        jetstream_max_bytes: the most the stream holds (`PLATFORM_JETSTREAM_MAX_BYTES`): the
            recorder's backlog, and a few small events a session; once full, new events wait.
    """

    jetstream_replicas: int = Field(1, ge=1, le=MAX_REPLICAS)
    jetstream_max_bytes: int = Field(DEFAULT_MAX_BYTES, ge=MIN_MAX_BYTES)

    @property
    def stream_shape(self) -> StreamShape:
        return StreamShape(self.jetstream_replicas, self.jetstream_max_bytes)
