"""At start: close sessions whose instance is gone (ghosts), stop instances with no session (orphans).

A ghost's CLOSED event is published (`platform_broker.session_endings`): no env host will, and
the recorder finishes its recording on it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from simulusion.bus.v1 import events_pb2
from simulusion.control.v1 import control_pb2

from platform_broker.envhosts import EnvHostClient
from platform_broker.errors import UnavailableError
from platform_broker.hosts import HostRegistry
from platform_broker.pools import POOL_SLOT_PREFIX
from platform_broker.session_endings import SessionEndings
from platform_broker.store import OPEN_STATES, RUNNING, SessionStore

log = logging.getLogger(__name__)

GHOST_REASON = "not running when the broker started"
ORPHAN_REASON = "orphan: no running session in the broker's table"
POOL_REASON = "warm pool instance of an earlier broker"


@dataclass
class ReconcileReport:
    hosts: list[str] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)   # ghost sessions marked CLOSED
    stopped: list[str] = field(default_factory=list)  # orphan instances stopped
    pool_stopped: list[str] = field(default_factory=list)  # warm pool instances of an earlier broker stopped


async def reconcile(store: SessionStore, hosts: HostRegistry, envhosts: EnvHostClient,
                    endings: SessionEndings) -> ReconcileReport:
    """Match the session table against the instances of every live env host.

    A STARTING/RUNNING session whose instance is not alive on its host (or whose host is not
    live) is closed, and its CLOSED event published through `endings`; an alive instance whose session is not RUNNING on that host is stopped.
    A host that does not answer its list request is judged by its last heartbeat. Warm pool
    instances (`pool-...`, not sessions) are stopped too: the broker's pools start afresh.
    """
    report = ReconcileReport()
    alive: dict[str, set[str]] = {}
    for host in hosts.live():
        try:
            instances = list((await envhosts.list(host.host_id)).instances)
        except UnavailableError as exc:
            log.warning("reconcile: %s; using its last heartbeat", exc)
            instances = list(host.heartbeat.instances)
        alive[host.host_id] = {info.session_id for info in instances if info.alive}
        report.hosts.append(host.host_id)

    for session in await store.list(OPEN_STATES):
        instance_alive = session.id in alive.get(session.host_id, set())
        if session.state == RUNNING and instance_alive:
            continue
        if await store.mark_closed(session.id, GHOST_REASON):
            report.closed.append(session.id)
            await endings.publish(session, events_pb2.SESSION_EVENT_KIND_CLOSED, GHOST_REASON)

    for host_id, session_ids in alive.items():
        for session_id in sorted(session_ids):
            stored = await store.get(session_id)
            if _runs_on(stored, host_id):
                continue
            pooled = stored is None and session_id.startswith(POOL_SLOT_PREFIX)
            what = "pool instance" if pooled else "orphan"
            try:
                reply = await envhosts.stop(host_id, session_id, POOL_REASON if pooled else ORPHAN_REASON)
            except UnavailableError as exc:
                log.warning("reconcile: could not stop %s %s: %s", what, session_id, exc)
                continue
            if reply.error.code:
                log.warning("reconcile: env host %s failed to stop %s %s: %s: %s", host_id, what, session_id,
                            reply.error.code, reply.error.message)
            else:
                (report.pool_stopped if pooled else report.stopped).append(session_id)

    log.info("reconcile: %d live env hosts %s; closed %d sessions not running %s; stopped %d orphan instances %s "
             "and %d pool instances of an earlier broker", len(report.hosts), report.hosts, len(report.closed),
             report.closed, len(report.stopped), report.stopped, len(report.pool_stopped))
    return report


def _runs_on(session: control_pb2.SessionInfo | None, host_id: str) -> bool:
    return session is not None and session.state == RUNNING and session.host_id == host_id
