"""Env hosts as seen through their heartbeats: which are live, and where a new session goes."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import DecodeError
from platform_contracts import subjects
from simulusion.control.v1 import control_pb2

log = logging.getLogger(__name__)

LIVE_WINDOW_S = 10.0
# A placement not yet in any heartbeat counts against its host for at most this long (an
# instance's start is bounded by the start timeout; one that never shows up stops counting).
PENDING_PLACEMENT_S = 120.0


@dataclass
class HostState:
    """The last heartbeat of one env host, when it came, and the instances placed on it that no
    heartbeat has listed yet (id -> when placed): a heartbeat sent while an instance was still
    starting does not list it, so a count reset at each heartbeat would forget it."""

    heartbeat: control_pb2.HostHeartbeat
    seen_at: float
    pending: dict[str, float] = field(default_factory=dict)

    @property
    def host_id(self) -> str:
        return self.heartbeat.host_id

    @property
    def address(self) -> str:
        return self.heartbeat.address

    @property
    def step_address(self) -> str:
        """The host's step link (host:port); empty for an env host without one."""
        return self.heartbeat.step_address

    @property
    def free(self) -> int:
        return self.heartbeat.capacity - self.heartbeat.running - len(self.pending)


class HostRegistry:
    """Live env hosts (a heartbeat within `live_window` seconds) and placement."""

    def __init__(self, live_window: float = LIVE_WINDOW_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.live_window = live_window
        self._clock = clock
        self._hosts: dict[str, HostState] = {}

    def on_heartbeat(self, heartbeat: control_pb2.HostHeartbeat) -> None:
        if not heartbeat.host_id:
            return
        if heartbeat.host_id not in self._hosts:
            log.info("env host %s is up at %s (capacity %d)", heartbeat.host_id, heartbeat.address,
                     heartbeat.capacity)
        elif self._hosts[heartbeat.host_id].heartbeat.started_at != heartbeat.started_at:
            log.info("env host %s restarted at %s (capacity %d)", heartbeat.host_id, heartbeat.address,
                     heartbeat.capacity)
        now = self._clock()
        previous = self._hosts.get(heartbeat.host_id)
        listed = {instance.session_id for instance in heartbeat.instances} | set(heartbeat.ended_session_ids)
        # Placements no beat has listed yet (as running or as ended) stay counted, unless the host
        # is a new process (it restarted, or was silent past the live window: its instances died
        # with it).
        same_process = (previous is not None and self._is_live(previous)
                        and previous.heartbeat.started_at == heartbeat.started_at)
        carried = previous.pending if previous is not None and same_process else {}
        pending = {
            instance_id: placed_at
            for instance_id, placed_at in carried.items()
            if instance_id not in listed and now - placed_at < PENDING_PLACEMENT_S
        }
        self._hosts[heartbeat.host_id] = HostState(heartbeat=heartbeat, seen_at=now, pending=pending)

    async def subscribe(self, nc: Any) -> Any:
        """Subscribe to the heartbeats on `nc`; returns the subscription."""

        async def on_msg(msg: Any) -> None:
            heartbeat = control_pb2.HostHeartbeat()
            try:
                heartbeat.ParseFromString(msg.data)
            except DecodeError:
                log.warning("ignoring a heartbeat that is not a HostHeartbeat (%d bytes)", len(msg.data))
                return
            self.on_heartbeat(heartbeat)

        return await nc.subscribe(subjects.ENVHOST_HEARTBEAT, cb=on_msg)

    def get(self, host_id: str) -> HostState | None:
        """The live host `host_id`, or None when unknown or silent for too long."""
        host = self._hosts.get(host_id)
        return host if host is not None and self._is_live(host) else None

    def live(self) -> list[HostState]:
        return [host for host in self._hosts.values() if self._is_live(host)]

    def pick(self, gpus: int = 0) -> HostState | None:
        """The live host with the most free capacity (ties: the lowest id) among those offering
        at least `gpus` GPUs to an instance; None when all of those are full (or there are none)."""
        candidates = [host for host in self.live() if host.free > 0 and host.heartbeat.gpus >= gpus]
        if not candidates:
            return None
        return min(candidates, key=lambda host: (-host.free, host.host_id))

    def note_placed(self, host_id: str, instance_id: str) -> None:
        """Count instance `instance_id` (a session or pool slot) against `host_id` until a
        heartbeat of that host lists it."""
        host = self._hosts.get(host_id)
        if host is not None:
            host.pending[instance_id] = self._clock()

    def instance(self, host_id: str, session_id: str) -> control_pb2.InstanceInfo | None:
        """The instance of `session_id` in the last heartbeat of live host `host_id`."""
        host = self.get(host_id)
        if host is None:
            return None
        for info in host.heartbeat.instances:
            if info.session_id == session_id:
                return info
        return None

    def _is_live(self, host: HostState) -> bool:
        return self._clock() - host.seen_at <= self.live_window
