"""Building a session's lifecycle events (SessionEvent) and the instance listings."""

from __future__ import annotations

import time

from platform_contracts import subjects
from simulusion.bus.v1 import events_pb2 as bus_pb
from simulusion.control.v1 import control_pb2 as control_pb

from platform_envhost.publisher import Outgoing
from platform_envhost.session_instance import Instance, State
from platform_envhost.step_events import MSG_ID

_KIND_NAMES = {
    bus_pb.SESSION_EVENT_KIND_STARTED: "started",
    bus_pb.SESSION_EVENT_KIND_CLOSED: "closed",
    bus_pb.SESSION_EVENT_KIND_CRASHED: "crashed",
}


def session_event(instance: Instance, kind: bus_pb.SessionEventKind.ValueType, host_id: str, *,
                  reason: str = "", trace_headers: dict[str, str] | None = None) -> Outgoing:
    """A SessionEvent for `instance`, ready to publish (deduplicated by session and kind)."""
    event = bus_pb.SessionEvent(
        session_id=instance.session_id, kind=kind, options=instance.options, env_kwargs_json=instance.kwargs_json,
        host_id=host_id, reason=reason, time=time.time(),
        last_seq=instance.events.seq if instance.events is not None else 0,
    )
    if kind == bus_pb.SESSION_EVENT_KIND_STARTED:
        event.spec.CopyFrom(instance.spec)
    elif instance.records.vector:
        builders = instance.records.builders
        event.sub_last_seqs.extend(builders[i].seq if i in builders else 0
                                   for i in range(max(instance.options.num_envs, max(builders, default=-1) + 1)))
    elif kind == bus_pb.SESSION_EVENT_KIND_CRASHED:
        event.reason = reason or instance.failure
        event.log_tail = instance.log_tail
    headers = dict(trace_headers or {})
    headers[MSG_ID] = f"{instance.session_id}:{_KIND_NAMES[kind]}"
    return Outgoing(subjects.session_lifecycle(instance.session_id, instance.options.life), event.SerializeToString(),
                    headers)


def instance_info(instance: Instance, *, with_log_tail: bool = True) -> control_pb.InstanceInfo:
    return control_pb.InstanceInfo(
        session_id=instance.session_id, alive=instance.state is State.RUNNING,
        last_active_at=instance.last_active_at, log_tail=instance.log_tail if with_log_tail else "",
    )
