"""The env host's heartbeat: capacity, load and instances, every few seconds on core NATS."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from nats.errors import Error as NatsError
from platform_contracts import subjects
from simulusion.control.v1 import control_pb2 as control_pb

log = logging.getLogger(__name__)


def build_heartbeat(host_id: str, address: str, capacity: int, running: int,
                    instances: list[control_pb.InstanceInfo], *, step_address: str = "") -> control_pb.HostHeartbeat:
    return control_pb.HostHeartbeat(host_id=host_id, address=address, capacity=capacity, running=running,
                                    time=time.time(), instances=instances, step_address=step_address)


async def heartbeat_loop(nc: Any, interval: float, beat: Callable[[], control_pb.HostHeartbeat]) -> None:
    """Publish `beat()` on `platform.envhost.heartbeat` now and every `interval` seconds."""
    failing = False
    while True:
        try:
            await nc.publish(subjects.ENVHOST_HEARTBEAT, beat().SerializeToString())
            failing = False
        except (NatsError, OSError) as exc:  # NATS away: the next beat tries again
            if not failing:
                log.warning("heartbeat not published: %s: %s", type(exc).__name__, exc)
            failing = True
        await asyncio.sleep(interval)
