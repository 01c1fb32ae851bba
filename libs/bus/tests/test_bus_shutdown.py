"""`platform_bus.shutdown`: a shutdown that hangs ends at its deadline with one line naming what
it waited for, a second signal ends it at once, and `stop_task` stops a task that swallows its
cancellation. Real processes and real signals."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import textwrap
import time

from platform_bus import cancel_requested, stop_task

# A service whose shutdown never finishes: after the signal it waits for an event nobody sets.
HANGING_SERVICE = textwrap.dedent("""
    import asyncio, logging, sys
    from platform_bus import GracefulShutdown

    async def main() -> None:
        shutdown = GracefulShutdown("hanging-service", deadline=float(sys.argv[1]))
        shutdown.install()
        print("ready", flush=True)
        await shutdown.requested.wait()
        shutdown.waiting_for("an event nobody sets")
        await asyncio.Event().wait()

    logging.basicConfig(level=logging.INFO)
    asyncio.run(main())
""")


def started(deadline: float) -> subprocess.Popen[str]:
    process = subprocess.Popen([sys.executable, "-c", HANGING_SERVICE, str(deadline)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    return process


def test_a_hanging_shutdown_exits_1_at_its_deadline_naming_what_it_waited_for() -> None:
    process = started(deadline=1.0)
    began = time.monotonic()
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=20)
    took = time.monotonic() - began
    assert process.returncode == 1, err
    assert 0.9 <= took < 10, took
    lines = [line for line in err.splitlines() if "graceful shutdown not done" in line]
    assert len(lines) == 1, err
    assert "hanging-service: graceful shutdown not done within 1 s, still waiting for an event nobody sets" in lines[0]


def test_a_second_signal_exits_at_once() -> None:
    process = started(deadline=60.0)
    process.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    began = time.monotonic()
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=20)
    assert time.monotonic() - began < 5
    assert process.returncode == 128 + signal.SIGINT, err
    assert "SIGINT again while stopping (waiting for an event nobody sets); exiting now" in err


async def test_stop_task_stops_a_loop_that_swallows_one_cancellation() -> None:
    swallowed = []

    async def stubborn_loop() -> None:  # as a loop around a nats-py call that turns a cancel into an error
        while True:
            try:
                try:
                    await asyncio.sleep(10)
                except asyncio.CancelledError:
                    swallowed.append(True)
                    raise RuntimeError("connection closed") from None
            except RuntimeError:
                if cancel_requested():
                    raise asyncio.CancelledError from None

    task = asyncio.create_task(stubborn_loop(), name="stubborn")
    await asyncio.sleep(0)
    assert await stop_task(task, timeout=2.0)
    assert task.cancelled() and swallowed


async def test_stop_task_gives_up_on_a_task_that_never_stops_and_says_so(caplog: object) -> None:
    deaf = [True]

    async def deaf_loop() -> None:  # swallows every cancellation while `deaf`
        while True:
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                if not deaf[0]:
                    raise

    task = asyncio.create_task(deaf_loop(), name="deaf-loop")
    await asyncio.sleep(0)
    began = time.monotonic()
    assert not await stop_task(task, timeout=0.5)
    assert time.monotonic() - began < 2
    assert not task.done()  # the caller moves on regardless
    assert "task deaf-loop did not stop within 0.5 s of being cancelled" in caplog.text  # type: ignore[attr-defined]
    deaf[0] = False
    assert await stop_task(task, timeout=2.0)
