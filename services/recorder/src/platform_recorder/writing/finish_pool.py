"""Episodes prepared in a worker process, while the writer's thread goes on with the next batch.

Preparing an episode (its arrays, its npz bytes: `finishing.prepare_episode`) is about a third of
the recorder's work for short episodes (a vector session of CartPoles finishes ~1,000 a second),
and it needs nothing but the episode's part file, durable before the batch is acked. So a
`FinishPool` hands a busy batch's episodes to one worker process as one task (one round trip a
batch, not an episode): it reads their part files, builds them and sends back each one's npz bytes
and meta entry. The writer's thread stores what comes back (`finishing.store_episode`) and lists it
in meta.json at a later settle. Nothing about durability changes: a part file stays until a
durable meta.json lists its episode, and a result that never comes back (a crash, a `reset`) is
redone from the part file.

Small batches (a lockstep session's episode or two) are prepared in line: a round trip to the
worker would cost more than it saves. The worker is spawned when the recorder starts (`start`:
its imports, ~0.5 s of CPU, are then done before the first busy batch; else with that batch; the
writer runs beside other threads: no plain fork), and dies with the recorder (Linux's parent-death
signal: a recorder killed outright leaves no worker behind). It runs at a lower priority (`nice`
+10): on a machine whose cores the sessions also step on, it takes the time they leave (the
recording lags a little more while they run and catches up after; JetStream holds the backlog)
rather than slowing them. A worker that dies is replaced, and its tasks are prepared in line.
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import os
import signal
import sys
from collections import deque
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from platform_recorder.writing.finishing import PreparedEpisode, prepare_episode
from platform_recorder.writing.held_observations import HeldObservations
from platform_recorder.writing.lives import LifePlace
from platform_recorder.writing.part_files import read_part
from simulusion.bus.v1 import events_pb2

log = logging.getLogger(__name__)

# A batch whose episodes to finish weigh less than this prepares them in line (`FinishJob.weight`:
# 16 CartPole episodes without frames; one of ~20 steps with frames to paint).
MIN_POOLED = 256
FRAME_WEIGHT = 16  # a frame to paint or encode costs about as much as 16 steps without one
# Tasks sent and not yet taken back; the writer waits for the oldest beyond this (so a worker
# slower than the writer bounds the episodes in flight instead of letting them pile up).
MAX_IN_FLIGHT = 3


@dataclass(frozen=True)
class FinishJob:
    """One episode to prepare from its part file (`path`), with `prepare_episode`'s arguments;
    `kept`: its events as the writer kept them in memory (used in line, never sent)."""

    path: str
    index: int
    where: str
    spec: Mapping[str, Any] | None
    life: LifePlace | None
    endless: bool
    kept: tuple[list[events_pb2.StepEvent], HeldObservations] | None = None
    weight: int = 16  # the work it is: its steps, plus FRAME_WEIGHT a frame to paint or encode


def prepare_from_part(job: FinishJob) -> PreparedEpisode | None:
    """The prepared episode of `job`'s part file; None when the file holds no event."""
    if job.kept is not None:
        events, held = job.kept
    else:
        held = HeldObservations()
        events = read_part(Path(job.path), held=held)
    if not events:
        return None
    return prepare_episode(job.index, events, job.where, job.spec, job.life, job.endless, held)


_PR_SET_PDEATHSIG = 1
WORKER_NICENESS = 10


def worker_setup(parent_pid: int) -> None:
    """The worker's initializer: it yields the processor to the sessions (`WORKER_NICENESS`), is
    killed when the recorder that started it dies (Linux), and leaves at once if that has already
    happened."""
    os.nice(WORKER_NICENESS)
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent_pid:
        os._exit(0)


def prepare_all(jobs: Sequence[FinishJob]) -> list[PreparedEpisode | None]:
    """`prepare_from_part` of each job, in order."""
    return [prepare_from_part(job) for job in jobs]


def prepare_to_send(jobs: Sequence[FinishJob]) -> list[PreparedEpisode | None]:
    """A task of the worker: `prepare_all`, with each npz as bytes (a memoryview is not pickled)."""
    prepared = prepare_all(jobs)
    for episode in prepared:
        if episode is not None and isinstance(episode.npz, memoryview):
            episode.npz = bytes(episode.npz)
    return prepared


class FinishHandle:
    """One episode being prepared: `result()` waits for it (and sends its task first if it is
    still queued)."""

    __slots__ = ("_pool", "_task", "job", "position")

    def __init__(self, pool: FinishPool, job: FinishJob) -> None:
        self._pool = pool
        self.job = job
        self._task: _Task | None = None
        self.position = 0

    def done(self) -> bool:
        return self._task is not None and self._task.future.done()

    def result(self) -> PreparedEpisode | None:
        if self._task is None:
            self._pool.dispatch()
        assert self._task is not None
        return self._task.results()[self.position]


class _Task:
    """Jobs sent to the worker together, and their results once back."""

    __slots__ = ("_results", "future", "jobs")

    def __init__(self, jobs: list[FinishJob], future: Future[list[PreparedEpisode | None]] | None) -> None:
        self.jobs = jobs
        self.future: Future[list[PreparedEpisode | None]] = future if future is not None else Future()
        self._results: list[PreparedEpisode | None] | None = None
        if future is None:  # prepared in line
            self._results = prepare_all(jobs)
            self.future.set_result(self._results)

    def results(self) -> list[PreparedEpisode | None]:
        if self._results is None:
            try:
                self._results = self.future.result()
            except BrokenProcessPool:  # the worker died: redone here, from the same part files
                log.error("the recorder's finishing worker died; %d episodes are prepared in line", len(self.jobs))
                self._results = prepare_all(self.jobs)
        return self._results


class FinishPool:
    """Prepares episodes for the writer, in a worker process when a batch has enough of them.

    `submit` queues a job; `dispatch` (the writer calls it once its batch is settled) sends the
    queued jobs as one task, or prepares them in line when they weigh less than `min_pooled`.

    Args:
        min_pooled: the least weight of queued jobs sent to the worker (`FinishJob.weight`).
        max_in_flight: tasks in the worker beyond which `dispatch` waits for the oldest.
    """

    def __init__(self, min_pooled: int = MIN_POOLED, max_in_flight: int = MAX_IN_FLIGHT) -> None:
        self.min_pooled = min_pooled
        self.max_in_flight = max_in_flight
        self._queued: list[FinishHandle] = []
        self._in_flight: deque[_Task] = deque()
        self._executor: ProcessPoolExecutor | None = None
        self.pooled_tasks = 0  # tasks sent to the worker so far

    def start(self) -> None:
        """Start the worker now (it imports what it needs while nothing waits for it)."""
        if self._executor is None:
            self._executor = self._new_executor()
            self._executor.submit(prepare_all, [])

    @staticmethod
    def _new_executor() -> ProcessPoolExecutor:
        return ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=worker_setup, initargs=(os.getpid(),))

    def submit(self, job: FinishJob) -> FinishHandle:
        handle = FinishHandle(self, job)
        self._queued.append(handle)
        return handle

    def dispatch(self) -> None:
        """Send the queued jobs (one task), or prepare them now when they are few."""
        handles, self._queued = self._queued, []
        if not handles:
            return
        jobs = [handle.job for handle in handles]
        weight = sum(job.weight for job in jobs)
        task = _Task(jobs, self._send(jobs) if weight >= self.min_pooled else None)
        for position, handle in enumerate(handles):
            handle._task, handle.position = task, position
        if not task.future.done():
            self._in_flight.append(task)
        while self._in_flight and (self._in_flight[0].future.done() or len(self._in_flight) > self.max_in_flight):
            self._in_flight.popleft().results()  # waits for the oldest when too many are out

    def _send(self, jobs: list[FinishJob]) -> Future[list[PreparedEpisode | None]] | None:
        """The worker's future of `jobs`; None when no worker can take it (prepared in line)."""
        for attempt in range(2):
            if self._executor is None:
                self._executor = self._new_executor()
            try:
                future = self._executor.submit(prepare_to_send, [replace(job, kept=None) for job in jobs])
            except (BrokenProcessPool, RuntimeError) as exc:
                log.warning("the recorder's finishing worker is gone (%s); starting another", exc)
                self._executor.shutdown(wait=False, cancel_futures=True)
                self._executor = None
                if attempt:
                    return None
                continue
            self.pooled_tasks += 1
            return future
        return None

    def drop_queued(self) -> None:
        """Forget the jobs not yet sent (their recordings' state was dropped: `RecordingWriter.reset`)."""
        self._queued.clear()

    def close(self) -> None:
        """Stop the worker (what it still prepares is dropped: redone from the part files)."""
        self._queued.clear()
        self._in_flight.clear()
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None
