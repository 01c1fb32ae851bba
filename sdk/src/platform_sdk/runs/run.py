"""`Run`: one training run's scalars, logged from any loop and kept on the platform.

    from platform_sdk.runs import start_run

    with start_run("ppo-cartpole", hparams={"lr": 3e-4}, seed=0) as run:
        for update in range(100):
            ...
            run.log({"loss/policy": loss, "episode/return": ret}, step=update, frames=frames)

`log` never blocks on the network: points are queued and a thread sends them in batches about
once a second. While the platform cannot be reached (a restart, a cut link) they stay queued, up
to `max_queued` points, and are sent when it is back; the run is made with an id chosen here, so
a retry never makes two. `finish()` (or leaving the `with` block) sends what is left and marks
the run finished, or failed when the block raised. At exit a run not finished is sent and marked
finished, or failed when the interpreter is ending on an uncaught exception.
"""

from __future__ import annotations

import atexit
import dataclasses
import logging
import os
import sys
import uuid
import weakref
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any

from platform_contracts.names import RUN_ID, RUN_ID_RULE

from platform_sdk.client.settings import resolve_token, resolve_url
from platform_sdk.runs.points import PointQueue
from platform_sdk.runs.sender import RunSender

log = logging.getLogger("platform_sdk.runs")

EXPERIMENT_ID_VARIABLE = "PLATFORM_EXPERIMENT_ID"  # set by the platform in an experiment's command
RUN_STATES = ("running", "finished", "failed")
_open_runs: weakref.WeakSet[Run] = weakref.WeakSet()


def scalar_params(params: Any) -> dict[str, Any]:
    """Hyperparameters as the API keeps them (numbers, strings, booleans, None): a dict, or a
    dataclass such as navix's frozen structs; anything else becomes its text."""
    if dataclasses.is_dataclass(params) and not isinstance(params, type):
        params = {field.name: getattr(params, field.name) for field in dataclasses.fields(params)}
    if not isinstance(params, Mapping):
        raise TypeError(f"hyperparameters must be a dict or a dataclass, not {type(params).__name__}")
    out: dict[str, Any] = {}
    for key, value in params.items():
        if value is None or isinstance(value, (bool, int, float, str)):
            out[str(key)] = value
        elif hasattr(value, "item") and getattr(value, "size", 2) == 1:  # a NumPy or JAX scalar
            out[str(key)] = value.item()
        else:
            out[str(key)] = str(value)
    return out


class Run:
    """A training run on the platform.

    Attributes:
        id: the run's id (`run-...`), chosen here unless given.
        url: the run's page on the platform.
    """

    def __init__(
        self,
        name: str,
        *,
        group: str | None = None,
        seed: int | None = None,
        tags: Iterable[str] = (),
        hparams: Any = None,
        experiment_id: str | None = None,
        session_ids: Iterable[str] = (),
        recording_ids: Iterable[str] = (),
        run_id: str | None = None,
        url: str | None = None,
        token: str | None = None,
        flush_every: float = 1.0,
        max_queued: int = 1_000_000,
    ) -> None:
        """Start a run (nothing waits on the platform: the run is made by the sending thread).

        Args:
            name: what the run is called on the Runs pages.
            group: runs of one group are the seeds of one configuration, drawn as their mean and
                min-max band (default: `name`).
            seed: this run's seed.
            tags, hparams: searchable labels; hyperparameters (a dict or a dataclass).
            experiment_id: the experiment it belongs to (default: PLATFORM_EXPERIMENT_ID, which
                the platform sets for an experiment's command).
            session_ids, recording_ids: the sessions and recordings it played.
            run_id: continue (or make) the run of this id, e.g. after a crash.
            url, token: the platform (default PLATFORM_URL, PLATFORM_TOKEN).
            flush_every: seconds between sends.
            max_queued: points kept while the platform is away; past it the oldest are dropped.
        """
        self.id = run_id or f"run-{uuid.uuid4().hex}"
        if RUN_ID.fullmatch(self.id) is None:
            raise ValueError(f"run id {self.id!r}: use {RUN_ID_RULE}")
        self.name = name
        base = resolve_url(url)
        self.url = f"{base}/runs/{self.id}"
        body: dict[str, Any] = {"id": self.id, "name": name, "group": group or name, "seed": seed,
                                "tags": list(tags), "hparams": scalar_params(hparams or {}),
                                "experiment_id": experiment_id or os.environ.get(EXPERIMENT_ID_VARIABLE) or None,
                                "session_ids": list(session_ids), "recording_ids": list(recording_ids)}
        self._queue = PointQueue(max_queued)
        self._sender = RunSender(self.id, base, resolve_token(token), body, self._queue, flush_every)
        self.finished = False
        _open_runs.add(self)

    # -- logging ---------------------------------------------------------------------------------
    def log(self, values: Mapping[str, Any], step: int, *, frames: int | None = None,
            time: float | None = None) -> None:
        """Queue `values` (metric name to number) at `step`.

        Args:
            frames: environment frames seen so far (an x axis of the Runs pages).
            time: when, in Unix seconds (default now).

        A NaN or infinite value is skipped (with one warning per metric name): the platform
        keeps finite numbers only.

        Raises:
            ValueError: a name the platform does not take, or a step or frame count that is not
                a whole number of at least 0.
        """
        for name in self._queue.add(values, step, frames, time):
            log.warning("run %s: %s was NaN or infinite at step %s: such values are skipped", self.id, name, step)
        self._sender.nudge()

    def log_value(self, name: str, value: Any, step: int, *, frames: int | None = None) -> None:
        """Queue one value (as `log`)."""
        self.log({name: value}, step, frames=frames)

    def update(self, *, tags: Iterable[str] | None = None, hparams: Any = None,
               session_ids: Iterable[str] | None = None, recording_ids: Iterable[str] | None = None,
               summary: Mapping[str, Any] | None = None, state: str | None = None) -> None:
        """Add tags, sessions, recordings; set hyperparameters, summary values or the state (sent
        in the background, merged as the API merges them)."""
        changes: dict[str, Any] = {}
        for key, items in (("tags", tags), ("session_ids", session_ids), ("recording_ids", recording_ids)):
            if items is not None:
                changes[key] = list(items)
        if hparams is not None:
            changes["hparams"] = scalar_params(hparams)
        if summary is not None:
            changes["summary"] = scalar_params(summary)
        if state is not None:
            if state not in RUN_STATES:
                raise ValueError(f"run state must be one of {', '.join(RUN_STATES)}, not {state!r}")
            changes["state"] = state
        if changes:
            self._sender.change(changes)

    # -- ending ----------------------------------------------------------------------------------
    def flush(self, timeout: float = 30.0) -> bool:
        """Send everything logged so far; True when the platform took all of it within `timeout`."""
        return self._sender.flush(timeout)

    def finish(self, state: str = "finished", timeout: float = 30.0) -> bool:
        """Send what is left, mark the run `state` and stop its thread; True when all of it was
        taken within `timeout` seconds (what was not is reported)."""
        if self.finished:
            return True
        self.update(state=state)
        return self.close(timeout)

    def close(self, timeout: float = 30.0) -> bool:
        """Send what is left and stop this handle's thread, leaving the run's state as it is (a
        handle that only adds to a run another process finishes, such as an RLlib env runner's)."""
        if self.finished:
            return True
        sent = self._sender.stop(timeout)
        self.finished = True
        _open_runs.discard(self)
        if not sent:
            why = self._sender.refused or f"the platform did not take them within {timeout:g} s"
            log.warning("run %s: %d points and the run's last changes were not sent: %s", self.id,
                        len(self._queue), why)
        if self._queue.dropped:
            log.warning("run %s: %d of the oldest points were dropped while the platform was away "
                        "(max_queued)", self.id, self._queue.dropped)
        return sent

    def __enter__(self) -> Run:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.finish("failed" if kind is not None and not issubclass(kind, KeyboardInterrupt) else "finished")

    def __repr__(self) -> str:
        return f"Run({self.id!r}, name={self.name!r})"


def start_run(name: str, **options: Any) -> Run:
    """Start a run called `name` (options as `Run`'s)."""
    return Run(name, **options)


_uncaught: list[BaseException] = []
_previous_excepthook = sys.excepthook


def _note_uncaught(kind: type[BaseException], value: BaseException, traceback: TracebackType | None) -> None:
    _uncaught.append(value)
    _previous_excepthook(kind, value, traceback)


sys.excepthook = _note_uncaught


@atexit.register
def _finish_open_runs() -> None:
    """A script that ends without `finish()` still sends what it logged: its runs are finished,
    or failed when it ends on an uncaught exception."""
    state = "failed" if _uncaught else "finished"
    for run in list(_open_runs):
        if not run.finish(state, timeout=10.0):
            log.warning("run %s: %d points were not sent before exit", run.id, len(run._queue))
