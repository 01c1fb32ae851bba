"""Every NATS subject and JetStream stream name of the platform, in one place."""

from __future__ import annotations

# JetStream stream holding every session's lifecycle, step and snapshot events.
SESSIONS_STREAM = "PLATFORM_SESSIONS"
SESSION_EVENTS_WILDCARD = "platform.session.>"
# Durable consumer names on SESSIONS_STREAM.
RECORDER_CONSUMER = "recorder"
BROKER_CONSUMER = "broker"


def session_lifecycle(session_id: str) -> str:
    """Subject of a session's SessionEvent messages."""
    return f"platform.session.{session_id}.lifecycle"


def session_steps(session_id: str) -> str:
    """Subject of a session's StepEvent messages (recorded sessions only)."""
    return f"platform.session.{session_id}.step"


def session_step_batches(session_id: str) -> str:
    """Subject of a session's StepEventBatch messages (holds, vector sessions; recorded only)."""
    return f"platform.session.{session_id}.steps"


def sub_session_id(session_id: str, index: int) -> str:
    """The id of sub-environment `index` of a vector session (its events and recording)."""
    return f"{session_id}-{index}"


def session_snapshots(session_id: str) -> str:
    """Subject of a session's SnapshotEvent messages."""
    return f"platform.session.{session_id}.snapshot"


SESSION_LIFECYCLE_WILDCARD = "platform.session.*.lifecycle"
# Every session's step events, single and gathered: what the recorder deletes from the stream once
# written (platform_recorder.writing.stream_trimmer).
SESSION_STEPS_WILDCARD = "platform.session.*.step"
SESSION_STEP_BATCHES_WILDCARD = "platform.session.*.steps"

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
