"""`platform_sdk.launch.child_process.start_child`: a `subprocess.Popen` child followed through
its pidfd, answering as `asyncio.subprocess.Process` does, on asyncio and on uvloop."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

import pytest
from platform_sdk.launch.child_process import DEVNULL, PIPE, STDOUT, start_child


async def test_a_piped_child_gives_its_output_and_exit_code() -> None:
    child = await start_child([sys.executable, "-c", "import sys; print('hello'); sys.stderr.write('err\\n'); "
                               "raise SystemExit(3)"], stdin=DEVNULL, stdout=PIPE, stderr=STDOUT, env=os.environ)
    assert child.stdout is not None
    output = await asyncio.wait_for(child.stdout.read(), 30)
    assert sorted(output.decode().split()) == ["err", "hello"]
    assert await asyncio.wait_for(child.wait(), 30) == 3
    assert child.returncode == 3


async def test_the_exit_code_is_known_without_waiting_and_signals_name_the_end() -> None:
    quick = await start_child(["true"], stdin=DEVNULL, stdout=DEVNULL, stderr=DEVNULL, env=os.environ)
    slow = await start_child(["sleep", "60"], stdin=DEVNULL, stdout=DEVNULL, stderr=DEVNULL, env=os.environ,
                             start_new_session=True)
    for _ in range(600):  # the loop reaps it as it ends, as asyncio's child watcher does
        if quick.returncode is not None:
            break
        await asyncio.sleep(0.05)
    assert quick.returncode == 0
    with pytest.raises(ProcessLookupError):
        quick.kill()
    assert os.getsid(slow.pid) == slow.pid  # a session of its own
    slow.terminate()
    assert await asyncio.wait_for(slow.wait(), 30) == -signal.SIGTERM
    assert await slow.wait() == -signal.SIGTERM  # waiting again answers the same


async def test_a_program_that_does_not_exist_is_an_os_error() -> None:
    with pytest.raises(FileNotFoundError):
        await start_child(["/nonexistent/program"], stdin=DEVNULL, stdout=DEVNULL, stderr=DEVNULL, env=os.environ)
