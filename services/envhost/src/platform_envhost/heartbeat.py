"""The env host's heartbeat: capacity, load and instances, every few seconds on core NATS (each
beat a span of its own, its context in the message's headers, like every message of the platform)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from platform_bus import BusUnavailableError, publish
from platform_contracts import subjects
from simulusion.control.v1 import control_pb2 as control_pb

log = logging.getLogger(__name__)


def build_heartbeat(host_id: str, address: str, capacity: int, running: int,
                    instances: list[control_pb.InstanceInfo], *, step_address: str = "",
                    gpus: int = 0, started_at: float = 0.0,
                    ended_session_ids: list[str] | None = None,
                    stream_full_since: float = 0.0) -> control_pb.HostHeartbeat:
    return control_pb.HostHeartbeat(host_id=host_id, address=address, capacity=capacity, running=running,
                                    time=time.time(), instances=instances, step_address=step_address, gpus=gpus,
                                    started_at=started_at, ended_session_ids=ended_session_ids or [],
                                    stream_full_since=stream_full_since)


async def heartbeat_loop(nc: Any, interval: float, beat: Callable[[], control_pb.HostHeartbeat]) -> None:
    """Publish `beat()` on `platform.envhost.heartbeat` now and every `interval` seconds."""
    failing = False
    while True:
        try:
            await publish(nc, subjects.ENVHOST_HEARTBEAT, beat().SerializeToString())
            failing = False
        except BusUnavailableError as exc:  # NATS away: the next beat tries again
            if not failing:
                log.warning("heartbeat not published: %s", exc)
            failing = True
        await asyncio.sleep(interval)
