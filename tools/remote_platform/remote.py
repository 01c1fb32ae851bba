"""Running the tool's server-side commands (on_server.py, sent on stdin to the server's python3)
and shell commands over an open connection."""

from __future__ import annotations

import json
import shlex
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncssh

from .errors import ToolError

ON_SERVER_SOURCE = (Path(__file__).parent / "on_server.py").read_text()
NO_PYTHON_EXIT = 127  # the shell's "command not found"


def on_server_command(command: str, *args: str) -> str:
    """The shell command that runs on_server.py's `command` (its source comes on stdin)."""
    return shlex.join(["python3", "-", command, *args])


async def run_on_server(connection: asyncssh.SSHClientConnection, command: str, *args: str) -> dict[str, Any]:
    """on_server.py's `command`, whose one line of output is JSON."""
    result = await connection.run(on_server_command(command, *args), input=ON_SERVER_SOURCE)
    stdout = str(result.stdout or "")
    stderr = str(result.stderr or "").strip()
    if result.exit_status == NO_PYTHON_EXIT and "python3" in stderr:
        raise ToolError("python3 is not on the server's PATH: install Python 3.11 or 3.12 there "
                        "(Debian/Ubuntu: apt-get install python3 python3-pip)")
    if result.exit_status != 0:
        last = stderr.splitlines()[-1] if stderr else f"exit status {result.exit_status}"
        raise ToolError(f"the server's python3 failed at {command!r}: {last}")
    try:
        parsed: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise ToolError(f"unexpected answer from the server at {command!r}: {stdout.strip()[:200]!r}") from None
    return parsed


async def stream_on_server(connection: asyncssh.SSHClientConnection, command: str,
                           *args: str) -> AsyncIterator[str]:
    """on_server.py's `command`, its output line by line as it comes."""
    async for line in stream_shell(connection, on_server_command(command, *args), stdin=ON_SERVER_SOURCE):
        yield line


async def stream_shell(connection: asyncssh.SSHClientConnection, command: str,
                       stdin: str | None = None) -> AsyncIterator[str]:
    """`command`'s output (stdout and stderr together) line by line as it comes."""
    process = await connection.create_process(command, stderr=asyncssh.STDOUT)
    try:
        if stdin is not None:
            process.stdin.write(stdin)
        process.stdin.write_eof()
        async for line in process.stdout:
            yield str(line).rstrip("\n")
        await process.wait()
    finally:
        process.close()
