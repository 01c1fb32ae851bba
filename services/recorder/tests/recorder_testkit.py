"""Helpers of the recorder's tests: StepEvent/SessionEvent builders (what the env host would
publish), publishing with Nats-Msg-Id, waiting for files, and the recorder as a real process."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from google.protobuf.message import Message
from platform_contracts import subjects
from platform_contracts.recorder_json import (
    array_json,
    array_of,
    message_to_json,
    recording_to_json,
    summary_to_json,
)
from platform_contracts.values import datamap_from_dict, tensor_from_array
from platform_recorder.errors import RecordingNotFoundError
from platform_recorder.layout import RECORDING_FILE
from platform_recorder.meta import RecordingMeta
from platform_recorder.reading.recording_store import MAX_READ_BYTES, RecordingStore
from platform_recorder.storage.interface import Storage
from simulusion.bus.v1 import events_pb2
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb
from simulusion.recorder.v1 import recorder_pb2 as rec
from simulusion.session.v1 import options_pb2

CARTPOLE_HIGH = np.array([4.8, np.inf, 0.42, np.inf], dtype=np.float32)


def box_space(high: np.ndarray) -> pb.Space:
    return pb.Space(box=pb.BoxSpace(low=tensor_from_array(-high), high=tensor_from_array(high)))


def cartpole_spec() -> env_pb.SpecResponse:
    return env_pb.SpecResponse(
        env_id="CartPole-v1",
        observation_space=box_space(CARTPOLE_HIGH),
        action_space=pb.Space(discrete=pb.DiscreteSpace(n=2, start=0, dtype="int64")),
    )


def dict_spec() -> env_pb.SpecResponse:
    obs = pb.Space(
        dict=pb.DictSpace(
            entries=[
                pb.NamedSpace(name="position", space=box_space(np.ones(2, dtype=np.float32))),
                pb.NamedSpace(name="goal", space=pb.Space(discrete=pb.DiscreteSpace(n=5, dtype="int64"))),
            ]
        )
    )
    return env_pb.SpecResponse(
        env_id="DictNav-v0",
        observation_space=obs,
        action_space=pb.Space(discrete=pb.DiscreteSpace(n=4, dtype="int64")),
    )


def started(
    session_id: str,
    spec: env_pb.SpecResponse | None = None,
    record: bool = True,
    kwargs: Mapping[str, Any] | None = None,
    life: str = "",
    frame_every: int = 0,
    max_frames: int = 0,
    endless: bool = False,
) -> events_pb2.SessionEvent:
    """A STARTED event; `life` (with its thinning settings) makes it a session of that life, and
    frame settings turn on `record_frames` as the broker does; `endless` sets the spec's flag."""
    base = spec or cartpole_spec()
    spec = env_pb.SpecResponse()
    spec.CopyFrom(base)
    spec.endless = spec.endless or endless
    kwargs_json = json.dumps(dict(kwargs or {}))
    options = options_pb2.SessionOptions(
        env_id=spec.env_id,
        kwargs_json=kwargs_json,
        record=record,
        record_frames=bool(frame_every or max_frames),
        life=life,
        frame_every=frame_every,
        max_frames=max_frames,
    )
    return events_pb2.SessionEvent(
        session_id=session_id,
        kind=events_pb2.SESSION_EVENT_KIND_STARTED,
        env_kwargs_json=kwargs_json,
        host_id="h1",
        time=time.time(),
        spec=spec,
        options=options,
    )


def closed(
    session_id: str,
    last_seq: int = 0,
    crashed: bool = False,
    reason: str = "closed by user",
    env_id: str = "CartPole-v1",
) -> events_pb2.SessionEvent:
    kind = events_pb2.SESSION_EVENT_KIND_CRASHED if crashed else events_pb2.SESSION_EVENT_KIND_CLOSED
    return events_pb2.SessionEvent(
        session_id=session_id,
        kind=kind,
        options=options_pb2.SessionOptions(env_id=env_id),
        reason=reason,
        log_tail="Traceback: boom" if crashed else "",
        time=time.time(),
        last_seq=last_seq,
    )


def cartpole_obs(seq: int) -> pb.Value:
    """A recognisable observation: its first element is the seq that produced it."""
    return pb.Value(tensor=tensor_from_array(np.array([seq, 0.5, -0.5, 1.0], dtype=np.float32)))


def dict_obs(seq: int) -> pb.Value:
    return pb.Value(
        dict=pb.DictValue(
            entries=[
                pb.NamedValue(
                    name="position",
                    value=pb.Value(tensor=tensor_from_array(np.array([seq, -seq], np.float32))),
                ),
                pb.NamedValue(name="goal", value=pb.Value(discrete=seq % 5)),
            ]
        )
    )


def reset_event(
    session_id: str,
    seq: int,
    episode: int,
    obs: Callable[[int], pb.Value] = cartpole_obs,
    frame: bytes | None = None,
    restore: bool = False,
) -> events_pb2.StepEvent:
    event = events_pb2.StepEvent(
        session_id=session_id, seq=seq, episode=episode, episode_step=0, time=time.time()
    )
    if restore:
        event.restore.CopyFrom(env_pb.RestoreResponse(observation=obs(seq)))
    else:
        event.reset.CopyFrom(env_pb.ResetResponse(observation=obs(seq), info=datamap_from_dict({"seed": 1})))
        if frame is not None:
            event.reset.frame.CopyFrom(env_pb.Frame(encoding="jpeg", width=2, height=2, data=frame))
    return event


def step_event(
    session_id: str,
    seq: int,
    episode: int,
    episode_step: int,
    action: int = 1,
    reward: float = 1.0,
    terminated: bool = False,
    truncated: bool = False,
    agent: Mapping[str, Any] | None = None,
    obs: Callable[[int], pb.Value] = cartpole_obs,
    frame: bytes | None = None,
) -> events_pb2.StepEvent:
    result = env_pb.StepResponse(
        observation=obs(seq), reward=reward, terminated=terminated, truncated=truncated
    )
    if frame is not None:
        result.frame.CopyFrom(env_pb.Frame(encoding="jpeg", width=2, height=2, data=frame))
    return events_pb2.StepEvent(
        session_id=session_id,
        seq=seq,
        episode=episode,
        episode_step=episode_step,
        time=time.time(),
        step=events_pb2.StepTransition(
            action=pb.Value(discrete=action), result=result, agent=datamap_from_dict(agent or {})
        ),
    )


def episode_events(
    session_id: str, first_seq: int, episode: int, steps: int, last: str = "terminated", **step_kwargs: Any
) -> list[events_pb2.StepEvent]:
    """A reset then `steps` steps; the last one terminated/truncated (or neither: last="")."""
    events = [reset_event(session_id, first_seq, episode, obs=step_kwargs.get("obs", cartpole_obs))]
    for i in range(1, steps + 1):
        flags = {last: True} if (i == steps and last) else {}
        events.append(
            step_event(
                session_id, first_seq + i, episode, i, action=i % 2, reward=float(i), **flags, **step_kwargs
            )
        )
    return events


def subject_of(msg: events_pb2.StepEvent | events_pb2.SessionEvent) -> str:
    if isinstance(msg, events_pb2.StepEvent):
        return subjects.session_steps(msg.session_id)
    return subjects.session_lifecycle(msg.session_id)


async def publish(
    js: Any,
    msg: events_pb2.StepEvent | events_pb2.SessionEvent,
    msg_id: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> None:
    """Publish like the env host: step events with Nats-Msg-Id <session>:<seq>."""
    hdrs = dict(headers or {})
    if isinstance(msg, events_pb2.StepEvent):
        hdrs["Nats-Msg-Id"] = msg_id or subjects.step_msg_id(msg.session_id, msg.seq)
    elif msg_id:
        hdrs["Nats-Msg-Id"] = msg_id
    await js.publish(subject_of(msg), msg.SerializeToString(), headers=hdrs or None, timeout=10)


def batch_of(*events: events_pb2.StepEvent) -> events_pb2.StepEventBatch:
    return events_pb2.StepEventBatch(events=list(events))


async def publish_batch(
    js: Any, session_id: str, number: int, events: list[events_pb2.StepEvent], msg_id: str | None = None
) -> None:
    """Publish like the env host: a StepEventBatch on the session's `.steps` subject with
    Nats-Msg-Id <session>:batch:<n>."""
    headers = {"Nats-Msg-Id": msg_id or subjects.step_batch_msg_id(session_id, number)}
    data = batch_of(*events).SerializeToString()
    await js.publish(subjects.session_step_batches(session_id), data, headers=headers, timeout=10)


async def wait_for(predicate: Callable[[], Any], timeout: float = 20.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(0.05)


# Recordings are read as the recordings API reads them: through RecordingStore, the one read path.
Recordings = Path | Storage


def read_meta(root: Recordings, recording_id: str) -> RecordingMeta | None:
    """The recording's meta.json (None while it has none)."""
    try:
        return RecordingStore(root).read_meta(recording_id)
    except RecordingNotFoundError:
        return None


def load_episode(root: Recordings, recording_id: str, index: int) -> dict[str, np.ndarray]:
    """Every array of a finished episode."""
    with RecordingStore(root).open_episode(recording_id, index) as (_, episode):
        return {name: episode.array(name) for name in episode.array_names}


def list_recordings(root: Recordings, **filters: str) -> list[dict[str, Any]]:
    """The recordings' summaries, newest first (`env_id`, `session_id`, `life`: see RecordingStore)."""
    return [summary_to_json(s) for s in RecordingStore(root).list_summaries(**filters)]


def read_recording_info(root: Recordings, recording_id: str) -> dict[str, Any]:
    """The recording's recording.json."""
    return json.loads(RecordingStore(root).read(recording_id, RECORDING_FILE, 0, MAX_READ_BYTES))


async def recorder_consumers(js: Any) -> dict[str, Any | None]:
    """Every partition's recorder consumer's info (None for one the recorder has not made yet)."""
    from nats.js.errors import NotFoundError

    infos: dict[str, Any | None] = {}
    for consumer in subjects.RECORDER_CONSUMERS:
        try:
            infos[consumer] = await js.consumer_info(subjects.SESSIONS_STREAM, consumer)
        except NotFoundError:
            infos[consumer] = None
    return infos


async def consumer_drained(js: Any) -> bool:
    """True when every partition's recorder consumer has delivered and acked everything in the stream."""
    infos = (await recorder_consumers(js)).values()
    return all(info is not None and not info.num_pending and not info.num_ack_pending for info in infos)


async def delivered_total(js: Any) -> int:
    """Messages delivered so far by every partition's recorder consumer (0 for one not made yet)."""
    infos = (await recorder_consumers(js)).values()
    return sum(info.delivered.consumer_seq for info in infos if info is not None and info.delivered)


def same_partition_ids(prefix: str, count: int, partition: int = 0) -> list[str]:
    """`count` session ids starting with `prefix` whose events are all in `partition`."""
    found: list[str] = []
    n = 0
    while len(found) < count:
        candidate = f"{prefix}-{n}x"
        if subjects.session_partition(candidate) == partition:
            found.append(candidate)
        n += 1
    return found


async def wait_drained(js: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not await consumer_drained(js):
        if time.monotonic() > deadline:
            raise AssertionError(f"the recorder did not ack every message within {timeout}s")
        await asyncio.sleep(0.05)


class RecorderProcess:
    """`python -m platform_recorder` as a child process (stderr kept in a file)."""

    def __init__(self, nats_url: str, root: Path, log_path: Path, **env: str) -> None:
        self.env = {
            **os.environ,
            "PLATFORM_NATS_URL": nats_url,
            "PLATFORM_RECORDINGS": str(root),
            "PLATFORM_RECORDER_FETCH_TIMEOUT": "0.2",
            # a killed recorder's partitions are taken by its successor this long after
            "PLATFORM_RECORDER_LEASE_S": "2",
            **env,
        }
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None
        self._log_offset = 0

    def start(self) -> RecorderProcess:
        self._log_offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        log = open(self.log_path, "ab")  # noqa: SIM115 - handed to the child
        self.process = subprocess.Popen(
            [sys.executable, "-m", "platform_recorder"], env=self.env, stdout=log, stderr=log
        )
        log.close()
        return self

    def ready(self) -> bool:
        """True once the process started last has started consuming."""
        with open(self.log_path, "rb") as f:
            f.seek(self._log_offset)
            return b"recorder writing to" in f.read()

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> int | None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode if self.process else None


# The recorder's request/reply subjects: (request message, reply message, the reply as the JSON
# object the REST API shows, the way the gateway turns it into one).
_API: dict[str, tuple[type[Any], type[Any], Callable[[Any], dict[str, Any]]]] = {
    subjects.RECORDER_LIST_RECORDINGS: (rec.ListRecordingsRequest, rec.ListRecordingsReply,
                                        lambda r: {"recordings": [summary_to_json(s) for s in r.recordings]}),
    subjects.RECORDER_GET_RECORDING: (rec.GetRecordingRequest, rec.GetRecordingReply,
                                      lambda r: {"recording": recording_to_json(r)}),
    subjects.RECORDER_RECORDING_FILES: (rec.RecordingFilesRequest, rec.RecordingFilesReply,
                                        lambda r: {"files": [{"name": f.name, "size": f.size} for f in r.files]}),
    subjects.RECORDER_EPISODE: (rec.EpisodeRequest, rec.EpisodeReply, lambda r: {
        "episode": message_to_json(r.episode),
        "array_names": list(r.array_names),
        "array_shapes": {n: {"dtype": a.dtype, "shape": list(a.shape)} for n, a in r.array_shapes.items()},
        "frame_count": r.frame_count,
        "arrays": {n: array_json(array_of(a)) for n, a in r.arrays.items()},
        "frames": {str(i): base64.b64encode(data).decode() for i, data in sorted(r.frames.items())},
        "in_progress": r.in_progress,
    }),
    subjects.RECORDER_EPISODE_DIGESTS: (rec.EpisodeDigestsRequest, rec.EpisodeDigestsReply,
                                        lambda r: {"observations": list(r.observations)}),
    subjects.RECORDER_DELETE_RECORDING: (rec.DeleteRecordingRequest, rec.DeleteRecordingReply,
                                         lambda r: {"deleted": r.deleted}),
    subjects.RECORDER_SAVE_COMPARISON: (rec.SaveComparisonRequest, rec.ComparisonReply,
                                        lambda r: {"comparison": json.loads(r.comparison_json)}),
    subjects.RECORDER_GET_COMPARISON: (rec.GetComparisonRequest, rec.ComparisonReply,
                                       lambda r: {"comparison": json.loads(r.comparison_json)}),
    subjects.RECORDER_LIST_COMPARISONS: (rec.ListComparisonsRequest, rec.ListComparisonsReply,
                                         lambda r: {"comparisons": [message_to_json(c) for c in r.comparisons]}),
}


def request_bytes(subject: str, body: Mapping[str, Any] | bytes | Message) -> bytes:
    """A request of `subject`: its message from the fields in `body` (bytes: as they are; a
    comparison's "document": as JSON text)."""
    if isinstance(body, bytes):
        return body
    if isinstance(body, Message):
        return body.SerializeToString()
    fields = dict(body)
    if "document" in fields:
        fields["document_json"] = json.dumps(fields.pop("document"))
    return bytes(_API[subject][0](**fields).SerializeToString())


async def ask(nc: Any, subject: str, body: Mapping[str, Any] | bytes | Message, timeout: float = 5) -> dict[str, Any]:
    """The reply to a request on one of the recorder's subjects, as the JSON object the REST API
    shows ({"error": {"code", "message"}} for an error)."""
    _, reply_type, to_json = _API[subject]
    reply = reply_type.FromString((await nc.request(subject, request_bytes(subject, body), timeout=timeout)).data)
    if reply.error.code:
        return {"error": {"code": reply.error.code, "message": reply.error.message}}
    return to_json(reply)


async def read_file(nc: Any, body: Mapping[str, Any]) -> tuple[bytes, dict[str, Any] | None]:
    """(the bytes, the error of the Simulusion-Error header or None) of a recordings.read request."""
    request = rec.ReadFileRequest(**body)
    reply = await nc.request(subjects.RECORDER_READ_FILE, request.SerializeToString(), timeout=5)
    error = (reply.headers or {}).get(subjects.RECORDER_ERROR_HEADER)
    return reply.data, json.loads(error) if error else None


def summaries(store: RecordingStore, **filters: Any) -> list[dict[str, Any]]:
    """`store.list_summaries(**filters)` as the JSON objects the REST API shows."""
    return [summary_to_json(s) for s in store.list_summaries(**filters)]


def file_list(store: RecordingStore, recording_id: str) -> list[dict[str, Any]]:
    """`store.files(recording_id)` as [{"name", "size"}]."""
    return [{"name": f.name, "size": f.size} for f in store.files(recording_id)]


def episode_json(store: RecordingStore, recording_id: str, index: int, **asked: Any) -> dict[str, Any]:
    """`store.episode(...)` as the JSON object of the episode subject's reply."""
    return _API[subjects.RECORDER_EPISODE][2](store.episode(recording_id, index, **asked))
