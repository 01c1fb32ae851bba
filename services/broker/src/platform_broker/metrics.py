"""The broker's metrics: the session table by environment, team and state (read at scrape
time), session creates and their failures by reason, and the live env hosts."""

from __future__ import annotations

from platform_bus.metrics_registry import ServiceMetrics, set_counts
from platform_contracts import metric_names
from simulusion.control.v1 import control_pb2

from platform_broker.hosts import HostRegistry
from platform_broker.store import SessionStore


class BrokerMetrics:
    def __init__(self, store: SessionStore, hosts: HostRegistry, replica: str | None = None) -> None:
        self.service = ServiceMetrics("broker", replica)
        self._store = store
        self._hosts = hosts
        self._sessions = self.service.gauge(metric_names.SESSIONS)
        self._created = self.service.counter(metric_names.SESSIONS_CREATED)
        self._failures = self.service.counter(metric_names.SESSION_CREATE_FAILURES)
        self._live_hosts = self.service.gauge(metric_names.LIVE_ENV_HOSTS)
        self.service.on_scrape(self._refresh)

    def created(self, request: control_pb2.CreateSessionRequest, reply: control_pb2.SessionReply) -> None:
        """Count one answered create: a session of its environment, or a failure by its code
        (the environment is left out of failures: an unknown one is whatever the client sent)."""
        if reply.HasField("error"):
            self._failures.labels(reply.error.code or "unknown").inc()
        else:
            self._created.labels(reply.session.options.env_id or request.options.env_id).inc()

    async def _refresh(self) -> None:
        self._live_hosts.set(len(self._hosts.live()))
        counts = await self._store.counts()
        set_counts(self._sessions, {key: float(n) for key, n in counts.items()})
