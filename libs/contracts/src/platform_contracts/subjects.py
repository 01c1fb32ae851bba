"""Every NATS subject and JetStream stream name of the platform, in one place."""

from __future__ import annotations

# JetStream stream holding every session's lifecycle, step and snapshot events.
SESSIONS_STREAM = "PLATFORM_SESSIONS"
SESSION_EVENTS_WILDCARD = "platform.session.>"
# Durable consumer names on SESSIONS_STREAM (the recorder's: one a partition, `recorder_consumer`).
BROKER_CONSUMER = "broker"

# A session's events carry its partition as their last token (`platform.session.<id>.<kind>.<p>`):
# recorders share the work by partition, each partition written by one recorder at a time
# through its own durable consumer (platform_recorder.partitions). The count is fixed: every
# publisher and every recorder must agree on it, and at most this many recorders share the work.
SESSION_PARTITIONS = 8
_FNV_OFFSET, _FNV_PRIME = 0x811C9DC5, 0x01000193


def session_partition(session_id: str, life: str = "") -> int:
    """The partition of a session's events: FNV-1a (32 bits) of its life's name (every session of
    a life in one partition, so that one recorder joins them to it in order) or else of its id,
    modulo the count. A vector session's sub-environments' events go on the vector session's
    subjects, so a sub-session's recording is in its parent's partition."""
    value = _FNV_OFFSET
    for byte in (life or session_id).encode():
        value = ((value ^ byte) * _FNV_PRIME) & 0xFFFFFFFF
    return value % SESSION_PARTITIONS


def _session_subject(session_id: str, kind: str, life: str) -> str:
    return f"platform.session.{session_id}.{kind}.{session_partition(session_id, life)}"


# `life`: the session's life (options.life), '' for none: it decides the partition.
def session_lifecycle(session_id: str, life: str = "") -> str:
    """Subject of a session's SessionEvent messages."""
    return _session_subject(session_id, "lifecycle", life)


def session_steps(session_id: str, life: str = "") -> str:
    """Subject of a session's StepEvent messages (recorded sessions only)."""
    return _session_subject(session_id, "step", life)


def session_step_batches(session_id: str, life: str = "") -> str:
    """Subject of a session's StepEventBatch messages (holds, vector sessions; recorded only)."""
    return _session_subject(session_id, "steps", life)


def sub_session_id(session_id: str, index: int) -> str:
    """The id of sub-environment `index` of a vector session (its events and recording)."""
    return f"{session_id}-{index}"


def session_snapshots(session_id: str, life: str = "") -> str:
    """Subject of a session's SnapshotEvent messages."""
    return _session_subject(session_id, "snapshot", life)


def session_event_kind(subject: str) -> str:
    """`lifecycle`, `step`, `steps` or `snapshot` of a session event's subject ('' for another)."""
    parts = subject.split(".")
    return parts[3] if len(parts) == 5 else ""


def session_of_subject(subject: str) -> str:
    """The session id of a session event's subject ('' for another subject)."""
    parts = subject.split(".")
    return parts[2] if len(parts) == 5 else ""


SESSION_LIFECYCLE_WILDCARD = "platform.session.*.lifecycle.*"
# Every session's step events, single and gathered.
SESSION_STEPS_WILDCARD = "platform.session.*.step.*"
SESSION_STEP_BATCHES_WILDCARD = "platform.session.*.steps.*"


def partition_events(partition: int) -> str:
    """Every event of the sessions in `partition`: a recorder's consumer filter."""
    return f"platform.session.*.*.{partition}"


def partition_step_subjects(partition: int) -> tuple[str, str]:
    """The step subjects (single and gathered) of `partition`: what its recorder deletes from the
    stream once written (platform_recorder.writing.stream_trimmer)."""
    return f"platform.session.*.step.{partition}", f"platform.session.*.steps.{partition}"


def recorder_consumer(partition: int) -> str:
    """The recorders' durable consumer of `partition`."""
    return f"recorder-p{partition}"


RECORDER_CONSUMERS = tuple(recorder_consumer(p) for p in range(SESSION_PARTITIONS))
# The key-value bucket of the recorders' leases (platform_recorder.partitions): `partition.<p>`
# names the recorder writing partition p, `member.<slot>` a live recorder.
RECORDER_LEASES_BUCKET = "platform-recorder-leases"

# Broker request/reply (protobuf messages of simulusion.control.v1).
BROKER_CREATE_SESSION = "platform.broker.sessions.create"
BROKER_GET_SESSION = "platform.broker.sessions.get"
BROKER_LIST_SESSIONS = "platform.broker.sessions.list"
BROKER_CLOSE_SESSION = "platform.broker.sessions.close"
BROKER_LIST_ENVS = "platform.broker.envs.list"
BROKER_USAGE = "platform.broker.usage"
# Queue group so several broker replicas share the requests.
BROKER_QUEUE = "broker"

# Env hosts.
ENVHOST_HEARTBEAT = "platform.envhost.heartbeat"


def envhost_start(host_id: str) -> str:
    return f"platform.envhost.{host_id}.start"


def envhost_stop(host_id: str) -> str:
    return f"platform.envhost.{host_id}.stop"


def envhost_list(host_id: str) -> str:
    return f"platform.envhost.{host_id}.list"


def envhost_claim(host_id: str) -> str:
    """Give a warm pooled instance of the host to a session (ClaimInstanceRequest)."""
    return f"platform.envhost.{host_id}.claim"


# gRPC metadata key naming the session on the env host's Environment service.
SESSION_ID_METADATA = "session-id"


def step_msg_id(session_id: str, seq: int) -> str:
    """Nats-Msg-Id of a step event: a retried publish is stored once."""
    return f"{session_id}:{seq}"


def step_batch_msg_id(session_id: str, batch: int) -> str:
    """Nats-Msg-Id of a session's StepEventBatch number `batch` (from 1)."""
    return f"{session_id}:batch:{batch}"

# Recorder request/reply (messages of simulusion.recorder.v1): recording listings and metadata.
RECORDER_LIST_RECORDINGS = "platform.recorder.recordings.list"
RECORDER_GET_RECORDING = "platform.recorder.recordings.get"
RECORDER_RECORDING_FILES = "platform.recorder.recordings.files"
# Raw bytes of a finished file (reply body); a failure sets the header RECORDER_ERROR_HEADER.
RECORDER_READ_FILE = "platform.recorder.recordings.read"
RECORDER_EPISODE = "platform.recorder.recordings.episode"
RECORDER_EPISODE_DIGESTS = "platform.recorder.recordings.digests"
RECORDER_DELETE_RECORDING = "platform.recorder.recordings.delete"
RECORDER_LIST_EPISODES = "platform.recorder.recordings.episodes"  # across recordings: the episode browser
RECORDER_ERROR_HEADER = "Simulusion-Error"
# Saved snapshots (protobuf messages of simulusion.control.v1), kept by the recorder.
RECORDER_SAVE_SNAPSHOT = "platform.recorder.snapshots.save"
RECORDER_GET_SNAPSHOT = "platform.recorder.snapshots.get"
RECORDER_LIST_SNAPSHOTS = "platform.recorder.snapshots.list"
# Comparisons of agents (simulusion.recorder.v1, like the recordings'), kept by the recorder.
RECORDER_SAVE_COMPARISON = "platform.recorder.comparisons.save"
RECORDER_LIST_COMPARISONS = "platform.recorder.comparisons.list"
RECORDER_GET_COMPARISON = "platform.recorder.comparisons.get"

# Machines request/reply (messages of simulusion.machines.v1): the users' GPU machines over SSH.
MACHINES_ADD = "platform.machines.add"
MACHINES_GET = "platform.machines.get"
MACHINES_LIST = "platform.machines.list"
MACHINES_CHECK = "platform.machines.check"
MACHINES_ACCEPT_HOST_KEY = "platform.machines.accept_host_key"
MACHINES_DELETE = "platform.machines.delete"
MACHINES_SSH_KEY = "platform.machines.ssh_key"
MACHINES_ADD_BEHIND_NAT = "platform.machines.add_behind_nat"
# Experiments on the machines (simulusion.machines.v1), run and followed by the machines service.
EXPERIMENTS_CREATE = "platform.machines.experiments.create"
EXPERIMENTS_GET = "platform.machines.experiments.get"
EXPERIMENTS_LIST = "platform.machines.experiments.list"
EXPERIMENTS_CANCEL = "platform.machines.experiments.cancel"
EXPERIMENTS_LOGS = "platform.machines.experiments.logs"
EXPERIMENTS_USAGE = "platform.machines.experiments.usage"
EXPERIMENTS_FETCH = "platform.machines.experiments.fetch"  # a file of the run folder, by byte range
# Published (ExperimentEnded) by the machines service when an experiment ends: the gateway
# revokes its API token. Outside platform.machines.> so the service does not hear its own events.
EXPERIMENTS_ENDED = "platform.experiments.ended"
# Queue group so several machines replicas share the requests.
MACHINES_QUEUE = "machines"

# Evals request/reply (messages of simulusion.evals.v1): Inspect evaluations on the machines.
EVALS_CREATE = "platform.evals.create"
EVALS_GET = "platform.evals.get"
EVALS_LIST = "platform.evals.list"
EVALS_CANCEL = "platform.evals.cancel"
EVALS_READ_LOG = "platform.evals.logs.read"  # bytes of a stored .eval log, by byte range
EVALS_QUEUE = "evals"

# Metrics (the gateway's /metrics): the gateway publishes an empty request with a reply inbox and
# every replica of every other service answers on it (no queue group) with its Prometheus text
# exposition, naming itself in the two headers (platform_bus.metrics_responder).
METRICS_COLLECT = "platform.metrics.collect"
METRICS_SERVICE_HEADER = "Simulusion-Metrics-Service"
METRICS_REPLICA_HEADER = "Simulusion-Metrics-Replica"
# A session's recent spans (simulusion.traces.v1): the gateway asks, every service answers from
# its in-memory buffer (no queue group: each replica of each service answers), for the trace view.
TRACES_RECENT = "platform.traces.recent"
