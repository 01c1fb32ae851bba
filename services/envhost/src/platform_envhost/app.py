"""The env host assembled: NATS, the publisher, the instance table, the step link and gRPC
servers, the control service and the heartbeat, with an orderly start and stop."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import Callable
from typing import Any

import grpc
from nats.errors import Error as NatsError
from platform_bus import NatsUnreachableError, connect
from platform_bus.metrics_responder import MetricsResponder
from platform_contracts.limits import MAX_GRPC_MESSAGE_BYTES
from platform_contracts.streams import ensure_sessions_stream
from platform_bus.recent_spans import answer_recent_spans
from platform_contracts.tracing import setup_tracing
from platform_sdk.launch.containers import remove_orphan_containers
from platform_sdk.launch.instance_processes import LaunchError
from pydantic import ValidationError

from platform_envhost.instance_spans import session_instance_spans
from platform_envhost.config import Settings
from platform_envhost.errors import ConfigError, EnvHostError
from platform_envhost.grpc_tickets import connect_handler
from platform_envhost.bus_contact import bus_contact_loop, lost_contact_reason
from platform_envhost.heartbeat import build_heartbeat, heartbeat_loop
from platform_envhost.instance_table import InstanceTable
from platform_envhost.metrics import EnvHostMetrics
from platform_envhost.pods.kube_settings import KubeSettings
from platform_envhost.pods.pod_launcher import PodLauncher
from platform_envhost.publisher import EventPublisher
from platform_envhost.router import Router
from platform_envhost.service import EnvHostService
from platform_envhost.step_link import StepLinkServer

log = logging.getLogger(__name__)

EVENTS_FLUSH_AT_STOP_S = 5.0  # at stop, connected: the last session events may wait so long for their acks
DRAIN_AT_STOP_S = 1.0

SERVER_OPTIONS = [
    ("grpc.max_send_message_length", MAX_GRPC_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_GRPC_MESSAGE_BYTES),
    ("grpc.so_reuseport", 0),
]


class EnvHost:
    """One env host process's parts. `start()` then `stop()`."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.host_id = settings.envhost_id
        self.started_at = time.time()  # in each heartbeat: a restart under the same id is told apart
        self.address = ""
        self.step_address = ""
        self._nc: Any = None
        self._server: grpc.aio.Server | None = None
        self._step_link: StepLinkServer | None = None
        self._service: EnvHostService | None = None
        self._publisher: EventPublisher | None = None
        self._table: InstanceTable | None = None
        self._heartbeat: asyncio.Task[None] | None = None
        self._bus_contact: asyncio.Task[None] | None = None
        self._orphan_sweep: asyncio.Task[None] | None = None
        self._pods: PodLauncher | None = None
        self.metrics = EnvHostMetrics(self.host_id)
        self._metrics_responder: MetricsResponder | None = None

    async def start(self) -> None:
        """Connect, serve the step link and gRPC, take control requests, start beating.

        Raises:
            EnvHostError: NATS unreachable, JetStream missing, or the listen address unusable.
        """
        s = self.settings
        tracer = setup_tracing("platform-envhost")
        try:
            self._nc = await connect(s.nats_url, name=f"envhost-{self.host_id}", logger=log)
        except NatsUnreachableError as exc:
            raise EnvHostError(str(exc), code="unavailable") from None
        # its recent spans and its instances', for the gateway's trace view
        await answer_recent_spans(self._nc, lambda session_id, trace_ids: session_instance_spans(
            self._table, session_id, trace_ids) if self._table is not None else [])
        js = self._nc.jetstream()
        try:
            await ensure_sessions_stream(js, s.stream_shape)
        except (NatsError, TimeoutError) as exc:
            raise EnvHostError(f"cannot set up the JetStream stream on {s.nats_url} "
                               f"(is JetStream enabled?): {type(exc).__name__}: {exc}", code="unavailable") from None
        self._publisher = EventPublisher(self._nc, backlog=s.envhost_publish_backlog)
        await self._publisher.start()
        if s.launcher == "kubernetes":
            self._pods = await _start_pod_launcher(self.host_id, s)
        service_ref: list[EnvHostService] = []
        self._table = InstanceTable(s.host_run_dir, s.envhost_capacity, ready_timeout=s.envhost_ready_timeout,
                                    on_crash=lambda instance: service_ref[0].on_crash(instance), pods=self._pods)
        self.metrics.watch(self._table, self._publisher)
        router = Router(self._table, self._publisher, self.host_id, tracer, step_clock=self.metrics.steps)
        self._service = EnvHostService(self._nc, js, self.host_id, self._table, self._publisher, router.drain, tracer)
        service_ref.append(self._service)
        self._server = grpc.aio.server(options=SERVER_OPTIONS)
        self._server.add_generic_rpc_handlers((connect_handler(router, self.host_id, s.ticket_secret),))
        try:
            port = self._server.add_insecure_port(s.envhost_listen)
        except RuntimeError as exc:
            raise ConfigError(f"cannot listen on PLATFORM_ENVHOST_LISTEN={s.envhost_listen}: {exc}") from None
        self._step_link = StepLinkServer(router, self._table, self.host_id, tracer, ticket_secret=s.ticket_secret)
        step_host, step_port = await self._step_link.start(s.step_listen)
        self.step_address = s.envhost_step_advertise or f"{_reachable(step_host)}:{step_port}"
        self.address = s.envhost_advertise or f"{_reachable(s.envhost_listen.rpartition(':')[0])}:{port}"
        await self._server.start()
        await self._service.start()
        self._metrics_responder = MetricsResponder(self._nc, self.metrics.service)
        await self._metrics_responder.start()
        self._heartbeat = asyncio.create_task(heartbeat_loop(self._nc, s.envhost_heartbeat_interval, self._beat))
        self._bus_contact = asyncio.create_task(bus_contact_loop(
            self._nc, s.envhost_heartbeat_interval, s.envhost_fence_after, self._lost_contact))
        if self._pods is None:
            self._orphan_sweep = asyncio.create_task(_remove_orphan_containers())  # in the background
        log.info("env host %s serving on %s, step link on %s (capacity %d, %d GPU(s) an instance, %s, run dir %s, "
                 "step tickets %s)", self.host_id, self.address, self.step_address, s.envhost_capacity, s.gpus_offered,
                 "local instances" if self._pods is None else
                 f"a pod per instance in namespace {self._pods.settings.namespace}", s.host_run_dir,
                 "required" if s.ticket_secret else "not checked: no PLATFORM_STEP_TICKET_SECRET")

    async def _lost_contact(self, seconds: float) -> None:
        """No round trip to NATS for `seconds`: the broker is about to call this host dead, so its
        sessions end here first (`platform_envhost.bus_contact`)."""
        assert self._service is not None
        reason = lost_contact_reason(self.host_id, seconds)
        ended = await self._service.end_sessions(reason)
        log.warning("%s: stopped its %d session(s) %s", reason, len(ended), " ".join(ended))

    def _beat(self) -> Any:
        assert self._table is not None and self._service is not None
        return build_heartbeat(self.host_id, self.address, self.settings.envhost_capacity, self._table.running,
                               self._service.instance_infos(with_log_tail=False), step_address=self.step_address,
                               gpus=self.settings.gpus_offered, started_at=self.started_at,
                               ended_session_ids=self._table.recently_ended(),
                               stream_full_since=self._publisher.full_since if self._publisher is not None else 0.0)

    async def stop(self, waiting_for: Callable[[str], None] = lambda step: None) -> None:
        """Stop every instance (CLOSED "env host stopped"), flush the events, disconnect; each
        step is named to `waiting_for` as it begins (the shutdown deadline's line names it)."""
        if self._heartbeat is not None:
            self._heartbeat.cancel()
        if self._bus_contact is not None:
            self._bus_contact.cancel()
        if self._orphan_sweep is not None:
            self._orphan_sweep.cancel()
        if self._metrics_responder is not None:
            await self._metrics_responder.stop()
        waiting_for("the instances to stop")
        if self._service is not None:
            await self._service.shutdown()
        if self._step_link is not None:
            await self._step_link.close()
        if self._server is not None:
            await self._server.stop(grace=1.0)
        if self._table is not None:
            await self._table.close()
        if self._pods is not None:
            await self._pods.close()
        waiting_for("JetStream's acks of the last session events")
        if self._publisher is not None:  # with NATS gone no ack comes: do not wait for one
            connected = self._nc is not None and self._nc.is_connected
            await self._publisher.close(timeout=EVENTS_FLUSH_AT_STOP_S if connected else 0.0)
        waiting_for("the NATS connection to drain")
        if self._nc is not None and not self._nc.is_closed:
            try:
                await asyncio.wait_for(self._nc.drain(), DRAIN_AT_STOP_S)
            except (NatsError, TimeoutError):
                await self._nc.close()
        if self.address:
            log.info("env host %s stopped", self.host_id)


async def _start_pod_launcher(host_id: str, settings: Settings) -> PodLauncher:
    """The Kubernetes launcher, started: this host's pods of an earlier run deleted.

    Raises:
        ConfigError: a bad PLATFORM_KUBE_* setting, or no Kubernetes API (one line).
    """
    try:
        kube = KubeSettings()
    except ValidationError as exc:
        first = exc.errors()[0]
        name = "PLATFORM_KUBE_" + str(first["loc"][0]).upper() if first["loc"] else "PLATFORM_KUBE_*"
        raise ConfigError(f"bad setting {name}: {first['msg']}") from None
    if not kube.image:
        raise ConfigError("PLATFORM_LAUNCHER=kubernetes needs PLATFORM_KUBE_IMAGE: the environments image "
                          "(simulusion-platform-envs) that runs the catalog's environments in pods")
    logging.getLogger("httpx2").setLevel(logging.WARNING)  # not a line per API request
    launcher = PodLauncher(kube, host_id, settings.host_run_dir)
    try:
        deleted = await launcher.start()
    except LaunchError as exc:
        await launcher.close()
        raise ConfigError(str(exc), code="unavailable") from None
    if deleted:
        log.info("deleted %d pod(s) of an earlier run of env host %s: %s", len(deleted), host_id, " ".join(deleted))
    return launcher


async def _remove_orphan_containers() -> None:
    """Remove the containers that killed env hosts of this machine left running; never raises."""
    try:
        removed = await remove_orphan_containers()
    except Exception as exc:  # noqa: BLE001 - a failed sweep must not take the env host down
        log.warning("cannot remove orphan containers: %s: %s", type(exc).__name__, exc)
        return
    if removed:
        log.info("removed %d orphan container(s) of killed env hosts: %s", len(removed), " ".join(removed))


def _reachable(host: str) -> str:
    """The host to advertise for a bind host: this machine's name for a wildcard."""
    return socket.gethostname() if host in ("0.0.0.0", "[::]", "::", "") else host
