"""`deploy`: the platform's source onto the server, set up, started detached, and the tunnel to
open it. The steps, each with its progress line:

1. connect (connection.py) and check the server (python3; for the default setup also make, a way
   to get uv, and PyPI; Node.js and npm are optional: without them the API runs but not the web
   app), the platform port free and no platform already running in the folder;
2. pack the source (archive.py) and upload it (`cat` on the server: no SFTP needed), unpack it;
3. set up, as `make run` does here (`make setup`, then the web app's build), its output streamed
   and kept in FOLDER/.gpu_server/setup.log;
4. start `python -m platform_local` in a session of its own (it outlives the SSH connection), its
   log in FOLDER/platform.log, and wait until http://127.0.0.1:PORT/ answers on the server."""

from __future__ import annotations

import asyncio
import collections
import json
import re
import shlex
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncssh

from .archive import STATE_DIR, pack_source
from .connection import connect
from .errors import ToolError
from .progress import Progress
from .remote import run_on_server, stream_on_server
from .target import SshTarget

DEFAULT_SETUP = "make setup && .venv/bin/python scripts/build_web.py --keep-going"
UPLOAD_CHUNK = 256 * 1024
UPLOAD_PLAIN_STEP = 25  # percent between the upload's progress lines off a terminal
HEARTBEAT_S = 15.0
SETUP_TAIL_LINES = 15
_SETUP_EXIT = re.compile(r"^gpu_server: setup exit status (\d+)$")


@dataclass(frozen=True)
class DeployOptions:
    folder: str
    platform_port: int
    setup_command: str = DEFAULT_SETUP
    platform_env: dict[str, str] = field(default_factory=dict)
    wait_timeout_s: float = 300.0

    @property
    def default_setup(self) -> bool:
        return self.setup_command == DEFAULT_SETUP


async def deploy(target: SshTarget, repo: Path, options: DeployOptions, progress: Progress) -> None:
    async with connect(target, progress.say) as connection:
        found = await _check_server(connection, options, progress)
        folder = str(found["folder"])
        with tempfile.TemporaryDirectory(prefix="gpu-server-") as scratch:
            archive = pack_source(repo, Path(scratch) / "source.tar.gz")
            progress.say(f"packing {archive.file_count} files, {_megabytes(archive.size)} "
                         f"(commit {archive.version['commit'][:12]})")
            remote_archive = f"{folder}/{STATE_DIR}/source.tar.gz"
            await _upload(connection, archive.path, remote_archive, archive.size, progress)
        unpacked = await run_on_server(connection, "unpack", folder, remote_archive)
        removed = f", {unpacked['removed']} left from the last deploy removed" if unpacked["removed"] else ""
        progress.say(f"unpacked {unpacked['files']} files into {folder}{removed}")
        await _set_up(connection, folder, options, progress)
        progress.say(f"starting the platform (PLATFORM_PORT={options.platform_port})")
        started = await run_on_server(connection, "start", folder, str(options.platform_port),
                                      json.dumps(options.platform_env))
        if "error" in started:
            raise ToolError(str(started["error"]))
        await _wait_until_up(connection, folder, int(started["pid"]), options, progress)
        progress.say(f"the platform runs on {target.host} (pid {started['pid']}; log {started['log']})")
        tunnel = target.ssh_command("-L", f"{options.platform_port}:127.0.0.1:{options.platform_port}")
        progress.say(f"open it through an SSH tunnel, then http://localhost:{options.platform_port} :\n"
                     f"  {tunnel}")


async def _check_server(connection: asyncssh.SSHClientConnection, options: DeployOptions,
                        progress: Progress) -> dict[str, Any]:
    """What the server has (on_server.py preflight); ToolError naming all that it lacks."""
    progress.say("checking the server")
    found = await run_on_server(connection, "preflight", options.folder, str(options.platform_port),
                                "1" if options.default_setup else "0")
    missing = []
    if options.default_setup:
        if not found["make"]:
            missing.append("make (Debian/Ubuntu: apt-get install make)")
        if not found["uv"] and not found["pip"]:
            missing.append("uv or pip to install it (apt-get install python3-pip)")
        if found.get("pypi"):
            missing.append(f"access to PyPI ({found['pypi']})")
    if missing:
        raise ToolError("the server lacks what the setup needs: " + "; ".join(missing))
    running = found["running"]
    if running:
        raise ToolError(f"the platform already runs in {found['folder']} on the server (pid {running['pid']}, "
                        f"port {running['port']}): stop it first (gpu_server.py stop), or deploy elsewhere with --dir")
    if not found["port_free"]:
        raise ToolError(f"port {options.platform_port} is already in use on the server: "
                        "choose another with --platform-port")
    have = [f"python3 {found['python']}"]
    if found["make"]:
        have.append(found["make"].split(",")[0])
    if options.default_setup:
        have.append("PyPI reachable")
        if not found["node"]:
            have.append("no Node.js: the API will run, the web app will not be built (install Node.js 20+)")
        elif found.get("npm"):
            have.append(f"Node.js {found['node']} but no npm registry ({found['npm']}): the web app may not build")
        else:
            have.append(f"Node.js {found['node']}")
    progress.say("the server has " + ", ".join(have))
    return found


async def _upload(connection: asyncssh.SSHClientConnection, local: Path, remote: str, size: int,
                  progress: Progress) -> None:
    live = progress.live(f"uploading {_megabytes(size)}: ")
    directory = remote.rsplit("/", 1)[0]
    command = f"mkdir -p {shlex.quote(directory)} && cat > {shlex.quote(remote)}"
    process = await connection.create_process(command, encoding=None)
    sent, step = 0, 0
    with local.open("rb") as source:
        while chunk := source.read(UPLOAD_CHUNK):
            process.stdin.write(chunk)
            await process.stdin.drain()
            sent += len(chunk)
            percent = 100 * sent // max(size, 1)
            if progress.tty or percent // UPLOAD_PLAIN_STEP > step:  # off a terminal: 25%, 50%, ...
                live.update(f"{percent}%", force=True)
                step = percent // UPLOAD_PLAIN_STEP
    process.stdin.write_eof()
    result = await process.wait()
    if result.exit_status != 0:
        stderr = result.stderr or b""
        error = (stderr.decode(errors="replace") if isinstance(stderr, bytes) else stderr).strip()
        raise ToolError(f"uploading to {remote} failed: {error or f'exit status {result.exit_status}'}")
    live.finish("done" if progress.tty else None)


async def _set_up(connection: asyncssh.SSHClientConnection, folder: str, options: DeployOptions,
                  progress: Progress) -> None:
    """The setup command in `folder`, its output streamed (the last line, or a heartbeat)."""
    log = f"{folder}/{STATE_DIR}/setup.log"
    progress.say(f"setting up: {options.setup_command} (can take minutes; log {log})")
    script = (f"export PATH=\"$HOME/.local/bin:$PATH\"; cd {shlex.quote(folder)} && "
              f"{{ ( {options.setup_command} ) 2>&1 </dev/null; echo \"gpu_server: setup exit status $?\"; }} "
              f"| tee {shlex.quote(log)}")
    process = await connection.create_process(shlex.join(["sh", "-c", script]), stderr=asyncssh.STDOUT)
    process.stdin.write_eof()
    tail: collections.deque[str] = collections.deque(maxlen=SETUP_TAIL_LINES)
    live = progress.live("  setup: ")
    started = last_output = time.monotonic()
    exit_status: int | None = None
    pending = asyncio.ensure_future(process.stdout.readline())
    try:
        while True:
            done, _ = await asyncio.wait({pending}, timeout=HEARTBEAT_S)
            now = time.monotonic()
            if not done:
                live.update(f"still working ({_duration(now - started)}; last: {tail[-1] if tail else '-'})",
                            force=now - last_output >= HEARTBEAT_S)
                continue
            line = str(pending.result())
            if not line:
                break
            pending = asyncio.ensure_future(process.stdout.readline())
            line = line.rstrip("\n").rstrip("\r").split("\r")[-1]
            match = _SETUP_EXIT.match(line)
            if match:
                exit_status = int(match[1])
                continue
            if line.strip():
                tail.append(line)
                live.update(line)
                last_output = now
    finally:
        pending.cancel()
        process.close()
    live.finish()
    if exit_status != 0:
        status = f"exit status {exit_status}" if exit_status is not None else "the connection ended"
        last_lines = "\n".join(f"  | {line}" for line in tail)
        raise ToolError(f"setup failed on the server ({status}); the last lines of {log}:\n{last_lines}")
    progress.say(f"set up in {_duration(time.monotonic() - started)}")


async def _wait_until_up(connection: asyncssh.SSHClientConnection, folder: str, pid: int,
                         options: DeployOptions, progress: Progress) -> None:
    url = f"http://127.0.0.1:{options.platform_port}/"
    live = progress.live(f"waiting for {url} on the server: ")
    outcome = "timeout"
    async for line in stream_on_server(connection, "wait", folder, str(options.platform_port), str(pid),
                                       str(options.wait_timeout_s)):
        if line.startswith("waiting "):
            live.update(f"{line.split()[1]} s")
        elif line.strip():
            outcome = line.strip()
    live.finish()
    if outcome.startswith("up "):
        code = int(outcome.split()[1])
        note = " (the web app is not built: see the setup log; the API at /v0 works)" if code == 503 else ""
        progress.say(f"{url} answers (HTTP {code}){note}")
        return
    log_tail = await _log_tail(connection, folder)
    if outcome == "died":
        raise ToolError(f"the platform exited right after starting; the last lines of {folder}/platform.log:\n"
                        f"{log_tail}")
    raise ToolError(f"{url} did not answer within {options.wait_timeout_s:.0f} s; the platform still runs "
                    f"(pid {pid}): see gpu_server.py logs, or stop it. The last lines of its log:\n{log_tail}")


async def _log_tail(connection: asyncssh.SSHClientConnection, folder: str, lines: int = 15) -> str:
    result = await connection.run(shlex.join(["tail", "-n", str(lines), f"{folder}/platform.log"]))
    return "\n".join(f"  | {line}" for line in str(result.stdout or "").splitlines())


def _megabytes(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
