"""A session's running environment instance: its process, its one link (framed, or a gRPC stream
for an image: `platform_envhost.instance_link`), its lock and state, the session's options, its
step records and its log of applied world changes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from enum import Enum
from typing import Any

from platform_contracts import subjects
from platform_sdk.launch.instance_processes import InstanceProcess
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.session.v1.options_pb2 import SessionOptions

from platform_envhost.agent_data import AgentNames
from platform_envhost.coalesced_steps import CoalescedSteps
from platform_envhost.errors import InstanceGone
from platform_envhost.event_batches import BatchCounter
from platform_envhost.instance_link import InstanceLink, Meanwhile, open_link
from platform_envhost.later_frames import LaterFrames
from platform_envhost.life_frames import LifeFrames, records_life_frames
from platform_envhost.publisher import Outgoing
from platform_envhost.step_events import StepEventBuilder
from platform_envhost.world_change_log import WorldChangeLog

LOG_TAIL_LINES = 40


class State(str, Enum):
    RUNNING = "running"
    STOPPING = "stopping"  # being stopped on request
    STOPPED = "stopped"
    DEAD = "dead"  # exited (or stopped answering) without being asked to


class SessionRecords:
    """What the env host keeps about one session's steps: the event numbering of each of its
    recordings (the session, or each sub-environment of a vector session), their agent data
    names, and the session's StepEventBatch counter. Its builders log the world changes their
    events carry in `world_changes`."""

    def __init__(self, session_id: str, record: bool, vector: bool,
                 world_changes: WorldChangeLog | None = None, life: str = "") -> None:
        self.session_id = session_id
        self.life = life  # the session's life: its events' partition (platform_contracts.subjects)
        self.record = record
        self.vector = vector
        self.world_changes = world_changes
        self.builders: dict[int, StepEventBuilder] = {}
        self.agent_names: dict[int, AgentNames] = {}
        self.batches = BatchCounter(session_id, life)

    def builder(self, index: int) -> StepEventBuilder:
        builder = self.builders.get(index)
        if builder is None:
            event_id = subjects.sub_session_id(self.session_id, index) if self.vector else self.session_id
            builder = self.builders[index] = StepEventBuilder(event_id, self.session_id, self.world_changes, index,
                                                                   life=self.life)
        return builder


class Instance:
    """A session's instance. Requests go through `forward` one at a time, under `lock`.

    The link to the instance carries request bytes unchanged: the env host parses a request
    only to learn its command, never re-encodes it. Its kind follows the instance's transport
    (frames for the env host's own processes, gRPC for images); it connects on the first
    request (`request_spec`), so constructing an Instance needs no event loop turn.
    """

    def __init__(self, session_id: str, options: SessionOptions, kwargs_json: str, process: InstanceProcess,
                 timeline: list[Any] | None = None) -> None:
        self.session_id = session_id
        self.env_id = options.env_id
        self.kwargs_json = kwargs_json  # the environment's: the catalog entry's with the session's over them
        self.options = options  # the session's, whole (its lifecycle events carry them)
        # Read on every step: plain attributes, taken from the options here and at `take_options`.
        self.record = options.record
        self.record_frames = options.record and options.record_frames  # every reset and step asks for its frame
        self.process = process
        # Its world-change timeline (entries as written; `instance_table.launch_spec`): only then
        # can its answers carry a ForRecording (`for_recording`), read on every step.
        self.world_changes = WorldChangeLog(timeline or [], self.describe)
        self.has_timeline = bool(self.world_changes.timeline)
        self.lock = asyncio.Lock()
        # Step events of answered requests, built after the answer is sent, in the order the
        # requests were answered (while the instance works on the next request: `meanwhile`,
        # installed by the Router; or by its timer when none comes); `events_lock` keeps that
        # order while publishing.
        # A builder adds its events to `coalesced` (sent as one StepEventBatch later) or returns
        # messages to publish at once.
        self.deferred_events: list[Callable[[], list[Outgoing]]] = []
        self.events_lock = asyncio.Lock()
        self.coalesced = CoalescedSteps()
        self.later_frames = LaterFrames()  # frames of render_later requests still to come
        # a life's session: learns its place, for the instance to draw only the frames kept
        self.life_frames = LifeFrames(session_id) if records_life_frames(options) else None
        self.state = State.RUNNING
        self.last_active_at = time.time()
        self._records: SessionRecords | None = None
        self.spec = env_pb.SpecResponse()
        self.failure = ""  # why it died, the message of UNAVAILABLE answers
        self.log_tail = ""
        self.dead = asyncio.Event()
        # Set once its CRASHED event is stored in JetStream (or storing it gave up): a request of
        # the dead instance is answered after that, so whoever gets the 410 and then asks for the
        # session (GET /v0/sessions/{id}) reads "crashed", never "running".
        self.crash_stored = asyncio.Event()
        self.meanwhile: Meanwhile | None = None  # run by every forward while the instance works
        self._link: InstanceLink = open_link(process, self.describe)

    def take_options(self, options: SessionOptions) -> None:
        """Serve a session made with `options` from now on (a claimed warm pool instance: its
        process keeps the options it was started with; the record settings are the session's).
        Its step records start anew."""
        self.options = options
        self.record = options.record
        self.record_frames = options.record and options.record_frames
        if self.life_frames is not None:
            self.life_frames.stop()
        self.life_frames = LifeFrames(self.session_id) if records_life_frames(options) else None
        self._records = None
        self.world_changes = WorldChangeLog(self.world_changes.timeline, self.describe, self.num_envs > 1)

    @property
    def durable(self) -> bool:
        """A recorded session whose steps are answered only once their events are stored
        (`SessionOptions.durable`, which the broker sets for every recorded session when
        PLATFORM_DURABLE_STEPS is on)."""
        return self.record and self.options.durable

    @property
    def num_envs(self) -> int:
        """Sub-environments (1: a single environment; more: a vector instance, see BatchRequest)."""
        return max(1, self.spec.num_envs)

    @property
    def records(self) -> SessionRecords:
        """The session's step records; made anew when the instance is given to another session
        (a claimed warm pool instance) or its record setting changes."""
        records = self._records
        if (records is None or records.session_id != self.session_id or records.record != self.record
                or records.life != self.options.life):
            records = self._records = SessionRecords(self.session_id, self.record, self.num_envs > 1,
                                                     self.world_changes, self.options.life)
        return records

    def builder(self, index: int = 0) -> StepEventBuilder | None:
        """The event builder of sub-environment `index` (0 for a single environment); None
        when the session is not recorded."""
        return self.records.builder(index) if self.record else None

    def agent_names(self, index: int = 0) -> AgentNames:
        """The agent data names of sub-environment `index`'s recording (kept unrecorded too, so
        the rules and their warnings are the same)."""
        names = self.records.agent_names
        found = names.get(index)
        if found is None:
            found = names[index] = AgentNames()
        return found

    @property
    def events(self) -> StepEventBuilder | None:
        """The session's event builder (sub-environment 0's for a vector session)."""
        return self.builder(0)

    def describe(self) -> str:
        return f"session {self.session_id} ({self.env_id})"

    async def forward(self, request: bytes) -> bytes:
        """Send one request's bytes and return the response's bytes. Hold `lock` around it.

        Between the two, `meanwhile` (when set) runs: the instance is busy with the request, so
        the env host's work there costs the stepping client nothing.

        Raises:
            InstanceGone: the link broke (the instance died or is being stopped); a
                cancellation of the caller goes on as CancelledError.
        """
        return await self._link.forward(request, self.meanwhile)

    async def request_spec(self) -> env_pb.SpecResponse:
        """Ask the instance for its spec (on start, before anyone else can use the stream)."""
        async with self.lock:
            raw = await self.forward(env_pb.EnvRequest(id=0, spec=env_pb.SpecRequest()).SerializeToString())
        response = env_pb.EnvResponse.FromString(raw)
        if response.HasField("error"):
            raise InstanceGone(f"the instance of {self.describe()} failed its spec request: "
                               f"{response.error.message}")
        self.spec = response.spec
        self.world_changes.vector = self.num_envs > 1
        return self.spec

    def mark_dead(self, failure: str) -> None:
        self.state = State.DEAD
        if self.life_frames is not None:
            self.life_frames.stop()
        self.failure = failure
        try:
            self.log_tail = self.process.log_tail(LOG_TAIL_LINES)
        except OSError:
            self.log_tail = ""
        self.dead.set()

    def unavailable(self, request_id: int) -> bytes:
        """The answer to any request of a dead instance."""
        return env_pb.EnvResponse(id=request_id, error=env_pb.Error(
            code=env_pb.ERROR_CODE_UNAVAILABLE, message=self.failure, log_tail=self.log_tail)).SerializeToString()

    async def close_stream(self) -> None:
        """Close the link to the instance (a request in flight fails with InstanceGone)."""
        if self.life_frames is not None:
            self.life_frames.stop()
        await self._link.close()
