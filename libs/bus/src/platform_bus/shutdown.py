"""Stopping a service: a graceful shutdown with a deadline, and background tasks that really stop.

`GracefulShutdown` takes SIGTERM and SIGINT. The first one asks the service to stop and starts
a deadline (`SHUTDOWN_DEADLINE_S`) on a thread of its own, so it fires even when an await of
the shutdown never finishes or the event loop is stuck: past it, one line names what the service
was still waiting for and the process exits with status 1. A second signal exits at once.

`stop_task` cancels a background task and waits for it, cancelling it again while it runs on:
nats-py swallows a cancellation in places (its flush of pending data returns instead, a pull
fetch cancelled on a closed connection raises `ConnectionClosedError`), so one `cancel()` may
leave a loop running for ever.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

SHUTDOWN_DEADLINE_S = 10.0  # from the first SIGTERM/SIGINT to the process's end
TASK_STOP_TIMEOUT_S = 2.0  # one background task, from its first cancel to giving up on it
_RECANCEL_EVERY_S = 0.2
DEADLINE_EXIT_STATUS = 1
_SIGNALS = (signal.SIGTERM, signal.SIGINT)


async def stop_task(task: asyncio.Task[object] | None, *, timeout: float = TASK_STOP_TIMEOUT_S,
                    logger: logging.Logger | None = None) -> bool:
    """Cancel `task` and wait (up to `timeout` s) until it is done, cancelling it again every
    0.2 s; True when it ended (however), False when it still runs (logged, named)."""
    if task is None or task.done():
        return True
    loop = asyncio.get_running_loop()
    give_up_at = loop.time() + timeout
    while not task.done():
        left = give_up_at - loop.time()
        if left <= 0:
            (logger or log).warning("task %s did not stop within %g s of being cancelled", task.get_name(), timeout)
            return False
        task.cancel()
        await asyncio.wait({task}, timeout=min(_RECANCEL_EVERY_S, left))
    if not task.cancelled() and task.exception() is not None:
        (logger or log).debug("task %s ended with %r", task.get_name(), task.exception())
    return True


def cancel_requested() -> bool:
    """Whether the current task was asked to stop, even when the `CancelledError` was swallowed
    on the way (a loop's `except Exception` then re-raises instead of trying again)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


class GracefulShutdown:
    """SIGTERM/SIGINT for one service: the first asks it to stop (and starts the deadline), a
    second exits at once.

    Args:
        service: the service's name, for the log lines ("platform_broker").
        deadline: seconds the graceful shutdown may take.
        logger: where its lines go.
    """

    def __init__(self, service: str, deadline: float = SHUTDOWN_DEADLINE_S,
                 logger: logging.Logger | None = None) -> None:
        self.service = service
        self.deadline = deadline
        self.log = logger or log
        self.requested = asyncio.Event()
        self.waiting = "the signal to be handled"
        self._timer: threading.Timer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._on_request: Callable[[], None] | None = None

    def install(self, on_request: Callable[[], None] | None = None) -> None:
        """Handle SIGTERM/SIGINT on the running loop; `on_request` is called at the first one
        (besides `requested` being set)."""
        self._loop = asyncio.get_running_loop()
        self._on_request = on_request
        for sig in _SIGNALS:
            self._loop.add_signal_handler(sig, self._signalled, sig)

    def waiting_for(self, what: str) -> None:
        """Name the step the shutdown is in now; the deadline's line names the last one."""
        self.waiting = what

    def begin(self) -> None:
        """Start the deadline (once); called at the first signal, or by a service stopping on
        its own."""
        if self._timer is not None:
            return
        self.requested.set()
        self._timer = threading.Timer(self.deadline, self._past_deadline)
        self._timer.daemon = True
        self._timer.name = f"{self.service}-shutdown-deadline"
        self._timer.start()

    def _signalled(self, sig: int) -> None:
        name = signal.Signals(sig).name
        if self._timer is not None:
            self._say(f"{self.service}: {name} again while stopping (waiting for {self.waiting}); exiting now")
            os._exit(128 + sig)
        self.log.info("%s: %s; stopping (at most %g s)", self.service, name, self.deadline)
        self.begin()
        if self._on_request is not None:
            self._on_request()

    def _past_deadline(self) -> None:
        tasks = self._pending_task_names()
        self._say(f"{self.service}: graceful shutdown not done within {self.deadline:g} s, still waiting for "
                  f"{self.waiting}{f' (tasks running: {tasks})' if tasks else ''}; exiting with status "
                  f"{DEADLINE_EXIT_STATUS}")
        os._exit(DEADLINE_EXIT_STATUS)

    def _pending_task_names(self) -> str:
        loop = self._loop
        if loop is None or loop.is_closed():
            return ""
        try:  # read from this thread while the loop runs: a best effort, for the line only
            names = sorted(task.get_name() for task in list(asyncio.all_tasks(loop)) if not task.done())
        except RuntimeError:
            return ""
        shown = ", ".join(names[:8])
        return shown + (f", ... ({len(names)} in all)" if len(names) > 8 else "")

    def _say(self, line: str) -> None:
        self.log.error("%s", line)
        for handler in logging.getLogger().handlers:
            handler.flush()
        sys.stderr.flush()
