"""Who may publish and subscribe what on the bus in managed mode: one NATS user per service.

In managed mode (`PLATFORM_MODE=managed`) every service connects with a user of its own
(`PLATFORM_NATS_USER`, `PLATFORM_NATS_PASSWORD`: see `platform_bus.connection`) whose
permissions are the subjects it needs and no other, all derived from
`platform_contracts.subjects`. Environment instances run users' code and get no user at all:
nats-server refuses a client without credentials once it has an `authorization` block.

`authorization_block` renders that block of the nats-server config; the local launcher
(`platform_local`) writes it with random passwords into the config of the server it starts.
An external server (Kubernetes) is given the same block, or the same permissions as its own
users or nkeys.

Every service but the gateway subscribes to `platform.metrics.collect` and answers the
gateway's gathering of metrics on its inbox (`platform_bus.metrics_responder`).

Every service may subscribe to `_INBOX.>` (the replies to its requests, JetStream's acks and
API answers among them) and publish there (its answers to requests it serves). Every service
answers `platform.traces.recent` (its recent spans, for the gateway's trace view). Who may touch the
`PLATFORM_SESSIONS` stream: the env host, the broker and the recorder may create it and read its
info (whoever starts first makes it); the broker and the recorder each run their own durable
consumer on it (the recorder one a session partition, and the key-value bucket of its leases);
the recorder alone may purge it (the step events it has written:
platform_recorder.writing.stream_trimmer) and update it (its limit, PLATFORM_JETSTREAM_MAX_BYTES);
no service may delete it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from platform_contracts import subjects

INBOX = "_INBOX.>"
_JS_API = "$JS.API"


@dataclass(frozen=True)
class Permissions:
    """The subjects one NATS user may publish to and subscribe to (NATS wildcards allowed)."""

    publish: tuple[str, ...]
    subscribe: tuple[str, ...]


@dataclass(frozen=True)
class NatsUser:
    """One user of the `authorization` block. `permissions` None: allowed everything (for tools
    and tests, never given to a service). The password is left out of the repr."""

    name: str
    password: str = ""
    permissions: Permissions | None = None

    def __repr__(self) -> str:
        return f"NatsUser(name={self.name!r}, password=***, permissions={self.permissions!r})"


def _namespace(subject: str) -> str:
    """`platform.broker.sessions.create` -> `platform.broker.>`: every subject of that service."""
    return ".".join(subject.split(".")[:2]) + ".>"


def _stream_setup() -> tuple[str, ...]:
    """Create the sessions stream (or keep it) and read its info: `ensure_sessions_stream`."""
    stream = subjects.SESSIONS_STREAM
    return f"{_JS_API}.STREAM.CREATE.{stream}", f"{_JS_API}.STREAM.INFO.{stream}"


def _stream_upkeep() -> tuple[str, ...]:
    """Purge the sessions stream's written step events and give it its limit: the recorder's."""
    stream = subjects.SESSIONS_STREAM
    return f"{_JS_API}.STREAM.PURGE.{stream}", f"{_JS_API}.STREAM.UPDATE.{stream}"


def _durable_consumer(consumer: str) -> tuple[str, ...]:
    """Run the durable pull consumer `consumer` on the sessions stream: make it (with or without
    a filter subject in the API subject), read, reset or delete it, pull from it, ack."""
    on = f"{subjects.SESSIONS_STREAM}.{consumer}"
    return (
        f"{_JS_API}.CONSUMER.CREATE.{on}", f"{_JS_API}.CONSUMER.CREATE.{on}.>",
        f"{_JS_API}.CONSUMER.DURABLE.CREATE.{on}", f"{_JS_API}.CONSUMER.INFO.{on}",
        f"{_JS_API}.CONSUMER.RESET.{on}", f"{_JS_API}.CONSUMER.DELETE.{on}",
        f"{_JS_API}.CONSUMER.MSG.NEXT.{on}", f"$JS.ACK.{on}.>",
    )


def _leases_bucket() -> tuple[str, ...]:
    """Make the recorders' leases bucket (a key-value bucket: the stream KV_<bucket>), read and
    write its keys."""
    bucket = subjects.RECORDER_LEASES_BUCKET
    stream = f"KV_{bucket}"
    return (
        f"{_JS_API}.STREAM.CREATE.{stream}", f"{_JS_API}.STREAM.INFO.{stream}",
        f"{_JS_API}.STREAM.MSG.GET.{stream}", f"{_JS_API}.DIRECT.GET.{stream}", f"{_JS_API}.DIRECT.GET.{stream}.>",
        f"$KV.{bucket}.>",
    )


_ANY_HOST = "*"
_ENVHOST_CONTROL = tuple(subject(_ANY_HOST) for subject in (
    subjects.envhost_start, subjects.envhost_stop, subjects.envhost_list, subjects.envhost_claim))
_BROKER = _namespace(subjects.BROKER_CREATE_SESSION)
_RECORDER = _namespace(subjects.RECORDER_LIST_RECORDINGS)
_MACHINES = _namespace(subjects.MACHINES_LIST)
_EVALS = _namespace(subjects.EVALS_LIST)

SERVICE_PERMISSIONS: Mapping[str, Permissions] = {
    # REST and WebSocket in front: asks the broker, the recorder and the machines service, nothing
    # else (it steps over gRPC and the step link, not NATS); gathers every service's metrics.
    # Hears that an experiment ended, to revoke its API token.
    # Gathers every service's metrics and a session's recent spans (and answers with its own spans).
    "gateway": Permissions(publish=(_BROKER, _RECORDER, _MACHINES, _EVALS, subjects.METRICS_COLLECT, subjects.TRACES_RECENT, INBOX),
                           subscribe=(subjects.EXPERIMENTS_ENDED, subjects.TRACES_RECENT, INBOX)),
    # Answers the broker subjects, starts and stops instances on env hosts, hears their
    # heartbeats, consumes lifecycle events and publishes those of sessions it ends itself; reads
    # a running session's last lifecycle event when asked for it (LifecycleConsumer.catch_up).
    "broker": Permissions(
        publish=(*_ENVHOST_CONTROL, subjects.SESSION_LIFECYCLE_WILDCARD, *_stream_setup(),
                 *_durable_consumer(subjects.BROKER_CONSUMER),
                 f"{_JS_API}.STREAM.MSG.GET.{subjects.SESSIONS_STREAM}", INBOX),
        subscribe=(_BROKER, subjects.ENVHOST_HEARTBEAT, subjects.METRICS_COLLECT, subjects.TRACES_RECENT, INBOX),
    ),
    # Serves the broker's control requests, beats, publishes every session's events, saves and
    # gets snapshots at the recorder.
    "envhost": Permissions(
        publish=(subjects.ENVHOST_HEARTBEAT, subjects.SESSION_EVENTS_WILDCARD, *_stream_setup(),
                 subjects.RECORDER_SAVE_SNAPSHOT, subjects.RECORDER_GET_SNAPSHOT, INBOX),
        subscribe=(*_ENVHOST_CONTROL, subjects.METRICS_COLLECT, subjects.TRACES_RECENT, INBOX),
    ),
    # Consumes the session events of the partitions it holds through their durable consumers,
    # keeps its leases of them in their key-value bucket, deletes the step events it has written
    # from the stream and gives it its limit; answers the recorder subjects.
    "recorder": Permissions(
        publish=(*_stream_setup(), *_stream_upkeep(),
                 *(subject for consumer in subjects.RECORDER_CONSUMERS for subject in _durable_consumer(consumer)),
                 *_leases_bucket(), INBOX),
        subscribe=(_RECORDER, subjects.METRICS_COLLECT, subjects.TRACES_RECENT, INBOX),
    ),
    # Answers the machines subjects (the users' GPU machines over SSH, experiments on them); asks
    # nobody; says when an experiment ended.
    "machines": Permissions(publish=(subjects.EXPERIMENTS_ENDED, INBOX),
                            subscribe=(_MACHINES, subjects.METRICS_COLLECT, subjects.TRACES_RECENT, INBOX)),
    # Answers the evals subjects; runs each eval as an experiment of the machines service (its
    # machine, the experiment, its log and its files), nothing else.
    "evals": Permissions(
        publish=(subjects.MACHINES_GET, subjects.EXPERIMENTS_CREATE, subjects.EXPERIMENTS_GET,
                 subjects.EXPERIMENTS_CANCEL, subjects.EXPERIMENTS_LOGS, subjects.EXPERIMENTS_FETCH, INBOX),
        subscribe=(_EVALS, subjects.METRICS_COLLECT, subjects.TRACES_RECENT, INBOX)),
}
"""The services' permissions; environment instances have none (no user)."""

SERVICES: tuple[str, ...] = tuple(SERVICE_PERMISSIONS)


def service_users(passwords: Mapping[str, str]) -> list[NatsUser]:
    """A user per service of `passwords` (service name -> password), named as the service.

    Raises:
        KeyError: a name that is not a service of `SERVICE_PERMISSIONS`.
    """
    return [NatsUser(name, password, SERVICE_PERMISSIONS[name]) for name, password in passwords.items()]


def _quoted(value: str) -> str:
    if any(c in value for c in '"\\\n\r') or not value.isprintable():
        raise ValueError("a NATS user name, password or subject must not hold quotes, backslashes or control "
                         "characters")
    return f'"{value}"'


def _subject_list(values: Iterable[str]) -> str:
    return "[" + ", ".join(_quoted(v) for v in values) + "]"


def _user_entry(user: NatsUser) -> str:
    if not user.name or not user.password:
        raise ValueError(f"NATS user {user.name!r} needs a name and a password")
    entry = f"user: {_quoted(user.name)}, password: {_quoted(user.password)}"
    if user.permissions is not None:
        entry += (f", permissions: {{publish: {{allow: {_subject_list(user.permissions.publish)}}}, "
                  f"subscribe: {{allow: {_subject_list(user.permissions.subscribe)}}}}}")
    return "{" + entry + "}"


def authorization_block(users: Iterable[NatsUser]) -> str:
    """The nats-server config block `authorization { users = [...] }` for `users`.

    Raises:
        ValueError: a user without a name or password, or a value with a quote, a backslash or a
            control character in it.
    """
    entries = [_user_entry(user) for user in users]
    if not entries:
        raise ValueError("an authorization block needs at least one user")
    lines = "\n".join(f"    {entry}" for entry in entries)
    return f"authorization {{\n  users = [\n{lines}\n  ]\n}}\n"


__all__ = ["INBOX", "SERVICES", "SERVICE_PERMISSIONS", "NatsUser", "Permissions", "authorization_block",
           "service_users"]
