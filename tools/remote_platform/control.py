"""`status`, `logs` and `stop`: the platform that `deploy` started on the server."""

from __future__ import annotations

import asyncio
import shlex
import signal
import sys

import asyncssh

from .connection import connect
from .errors import Interrupted, ToolError
from .progress import Progress
from .remote import run_on_server
from .target import SshTarget

STOP_TIMEOUT_S = 30
NOT_RUNNING_EXIT = 3  # status's exit when the platform does not run (as `systemctl status` does)


async def status(target: SshTarget, folder: str, progress: Progress) -> int:
    async with connect(target, lambda _: None) as connection:
        found = await run_on_server(connection, "status", folder)
    where = f"{target.destination} port {target.port}, {found['folder']}"
    if not found["deployed"]:
        progress.say(f"not deployed ({where}): run gpu_server.py deploy")
        return NOT_RUNNING_EXIT
    lines = [f"platform on {where}"]
    port = found["port"]
    if found["running"]:
        lines.append(f"  running: yes, pid {found['pid']} (since {found['started_at']})")
        answer = f"answers (HTTP {found['answering']})" if found["answering"] else "does not answer"
        lines.append(f"  http://127.0.0.1:{port}/ on the server: {answer}")
    else:
        lines.append("  running: no (gpu_server.py deploy starts it again)")
    version = found["version"]
    if version:
        changes = " with uncommitted changes" if version.get("changes") == "uncommitted changes" else ""
        subject = f" \"{version['subject']}\"" if version.get("subject") else ""
        lines.append(f"  deployed: {version.get('commit')}{subject}{changes}, "
                     f"at {version.get('deployed_at')} from {version.get('deployed_from')}")
    lines.append(f"  log: {found['log']}")
    if found["running"] and port:
        lines.append(f"  open it: {target.ssh_command('-L', f'{port}:127.0.0.1:{port}')}, "
                     f"then http://localhost:{port}")
    progress.say("\n".join(lines))
    return 0 if found["running"] else NOT_RUNNING_EXIT


async def logs(target: SshTarget, folder: str, lines: int, follow: bool) -> int:
    """The platform's log; with `follow`, until Ctrl-C (the server's `tail` ends with the connection)."""
    log = f"{_shell_path(folder)}/platform.log"
    missing = f'[ -f "$1" ] || {{ echo "no log at $1: the platform was never started there" >&2; exit {NOT_RUNNING_EXIT}; }}'
    if follow:
        # tail in the background, ended when the connection closes (stdin's EOF) so none lingers.
        body = f'{missing}; tail -n {lines} -F "$1" & t=$!; cat >/dev/null; kill $t'
    else:
        body = f'{missing}; exec tail -n {lines} "$1"'
    async with connect(target, lambda _: None) as connection:
        process = await connection.create_process(f"sh -c {shlex.quote(body)} sh {log}")
        if follow:
            await _follow_until_interrupted(connection, process)
        else:
            process.stdin.write_eof()
            await _copy_lines(process)
        result = await process.wait()
    if result.exit_status:
        raise ToolError(str(result.stderr or "").strip() or f"tail failed (exit status {result.exit_status})")
    return 0


async def _copy_lines(process: asyncssh.SSHClientProcess[str]) -> None:
    async for line in process.stdout:
        sys.stdout.write(str(line))
        sys.stdout.flush()


async def _follow_until_interrupted(connection: asyncssh.SSHClientConnection,
                                    process: asyncssh.SSHClientProcess[str]) -> None:
    """Prints the server's lines until its tail ends or Ctrl-C. Ctrl-C is taken here as an event, not as
    the main task's cancellation: on a loaded CI machine the tool once went on following for minutes
    after Ctrl-C, and this way its end does not depend on where in asyncssh's reading a cancellation
    lands. The connection is dropped at once (a loaded server may be slow to answer a polite close);
    the server's tail ends with it."""
    loop = asyncio.get_running_loop()
    interrupted = asyncio.Event()
    loop.add_signal_handler(signal.SIGINT, interrupted.set)
    copying = asyncio.ensure_future(_copy_lines(process))
    waiting = asyncio.ensure_future(interrupted.wait())
    try:
        await asyncio.wait({copying, waiting}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        waiting.cancel()
    if interrupted.is_set():
        copying.cancel()
        connection.abort()
        raise Interrupted
    await copying  # the server's tail ended by itself: its errors, if any, are the command's


async def stop(target: SshTarget, folder: str, progress: Progress) -> int:
    async with connect(target, lambda _: None) as connection:
        progress.say(f"stopping the platform in {folder} on {target.host} (SIGTERM, up to {STOP_TIMEOUT_S} s)")
        result = await run_on_server(connection, "stop", folder, str(STOP_TIMEOUT_S))
    if result["stopped"] is None:
        progress.say("the platform was not running")
    elif result["killed"]:
        progress.say(f"stopped (pid {result['stopped']}): {len(result['killed'])} processes did not end within "
                     f"{STOP_TIMEOUT_S} s and were killed")
    else:
        progress.say(f"stopped (pid {result['stopped']}, all its processes ended)")
    return 0


def _shell_path(folder: str) -> str:
    """`folder` for the server's shell: `~` and relative paths in $HOME, the rest quoted."""
    if folder == "~":
        return '"$HOME"'
    if folder.startswith("/"):
        return shlex.quote(folder)
    return '"$HOME"/' + shlex.quote(folder.removeprefix("~/"))
