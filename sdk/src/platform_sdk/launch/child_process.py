"""Starting a child process from an event loop without running Python in the forked child.

`asyncio.create_subprocess_exec` under uvloop (the env host's loop) forks with libuv and runs
the interpreter's at-fork hooks in the child (uvloop#749); a child can spin there for ever in
`threading._after_fork` (the env host's uvloop test hung twice in CI that way). CPython's
`subprocess.Popen`, given no `preexec_fn`, runs no Python between fork and exec (vfork or
posix_spawn). `start_child` starts the child with it and follows its end through a pidfd the
loop watches, so `ChildProcess` answers as `asyncio.subprocess.Process` does: `returncode` is
set as soon as the child ends, `wait()` is awaitable, `stdout` is a stream when piped. Where
there are no pidfds (not Linux), asyncio's own way is used.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Mapping, Sequence
from typing import IO, Any, Protocol

PIPE = subprocess.PIPE
STDOUT = subprocess.STDOUT
DEVNULL = subprocess.DEVNULL


class Child(Protocol):
    """What the launcher needs of a child: `asyncio.subprocess.Process`'s surface."""

    pid: int
    stdout: asyncio.StreamReader | None

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> int: ...

    def terminate(self) -> None: ...

    def kill(self) -> None: ...


class ChildProcess:
    """A `subprocess.Popen` child whose end the running loop notices through its pidfd."""

    def __init__(self, popen: subprocess.Popen[bytes], pidfd: int, stdout: asyncio.StreamReader | None) -> None:
        self._popen = popen
        self.pid = popen.pid
        self.stdout = stdout
        self._loop = asyncio.get_running_loop()
        self._ended: asyncio.Future[int] = self._loop.create_future()
        self._pidfd: int | None = pidfd
        self._loop.add_reader(pidfd, self._reap)

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    async def wait(self) -> int:
        return await asyncio.shield(self._ended)

    def terminate(self) -> None:
        self._signal(self._popen.terminate)

    def kill(self) -> None:
        self._signal(self._popen.kill)

    def _signal(self, send: Any) -> None:
        if self._popen.returncode is not None:
            raise ProcessLookupError(f"the child {self.pid} has ended")
        send()

    def _reap(self) -> None:
        code = self._popen.poll()
        if code is None:  # woken without an end (should not happen): keep watching
            return
        self._close_pidfd()
        if not self._ended.done():
            self._ended.set_result(code)

    def _close_pidfd(self) -> None:
        if self._pidfd is not None:
            self._loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None


async def start_child(argv: Sequence[str], *, stdin: int | IO[Any] | None, stdout: int | IO[Any] | None,
                      stderr: int | IO[Any] | None, env: Mapping[str, str], start_new_session: bool = False) -> Child:
    """Start `argv` as a child of this process; `stdout=PIPE` gives it as an asyncio stream.

    Raises:
        OSError: it could not be started (no such program, no permission, no memory).
    """
    if not hasattr(os, "pidfd_open"):
        return await asyncio.create_subprocess_exec(*argv, stdin=stdin, stdout=stdout, stderr=stderr, env=dict(env),
                                                    start_new_session=start_new_session)
    popen = subprocess.Popen(list(argv), stdin=stdin, stdout=stdout, stderr=stderr, env=dict(env),
                             start_new_session=start_new_session)
    try:
        pidfd = os.pidfd_open(popen.pid)
    except OSError:  # a kernel without pidfds (before 5.3)
        popen.kill()
        popen.wait()
        raise
    reader = None
    if popen.stdout is not None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=2**20)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), popen.stdout)
    return ChildProcess(popen, pidfd, reader)
