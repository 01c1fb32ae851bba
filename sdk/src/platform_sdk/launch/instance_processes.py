"""Environment servers (`python -m platform_sdk`) as child processes on Unix sockets, and the
vocabulary of every instance: `LaunchSpec`, `LaunchError`, `InstanceProcess`.

An instance is killed when the process that launched it dies (Linux parent-death signal), so
instances never outlive their env host. Its stdout and stderr go to `<run_dir>/<name>.log`: straight
from the process, or, when its environment says `PLATFORM_LOG_FORMAT=json`, through a pipe that
this process reads (`relay_json_lines`): the instance's own JSON log lines pass whole, any other
line it prints (the READY line, a library on stderr) is wrapped into a JSON line, so the file holds
JSON lines only; its tail reads the same either way.
`platform_sdk.launch.instance_launch` starts either kind of instance: these processes, or a `docker
run` of an image (`platform_sdk.launch.containers`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from platform_contracts.log_lines import LOG_FORMAT_VARIABLE, as_json_line

from platform_sdk.launch.child_process import DEVNULL, PIPE, STDOUT, Child, start_child
from platform_sdk.launch.parent_death import die_with_parent_env

Transport = Literal["grpc", "frames"]
"""How an instance is spoken to: the environment protocol's gRPC stream, or the same messages
as length-prefixed frames on its Unix socket (`python -m platform_sdk --transport frames`)."""

# Unix socket paths are limited to 107 bytes; keep well under.
MAX_SOCKET_PATH = 100
_POLL_S = 0.01
INSTANCE_SERVICE = "instance"
"""The `service` of the JSON lines an instance's other output is wrapped into."""
_RELAY_CHUNK = 64 * 1024
_RELAY_DRAIN_S = 2.0  # after the process ended: its last lines (a traceback) reach the log first


@dataclass
class LaunchSpec:
    """What to run: a Gymnasium id, a "module:function" factory (with a folder for sys.path), or
    a Docker image serving the environment protocol on port 50051."""

    gymnasium_id: str = ""
    factory: str = ""  # "module:function"
    path: str = ""  # a folder added to sys.path for the factory
    kwargs: dict[str, Any] = field(default_factory=dict)
    image: str = ""  # a Docker image whose entry point is the environment server
    jpeg_quality: int = 0  # 1-100 for rendered frames; 0: the server's default
    num_envs: int = 1  # > 1: one server hosting that many sub-environments (a vector instance)


class LaunchError(Exception):
    """An instance did not start. The message names what failed and includes the log tail.

    Attributes:
        log_tail: the last lines of the instance's log ("" when it never ran).
    """

    def __init__(self, message: str, log_tail: str = "") -> None:
        super().__init__(f"{message}\n--- log tail ---\n{log_tail}" if log_tail else message)
        self.log_tail = log_tail


class InstanceProcess:
    """A running environment server.

    Attributes:
        address: its address, e.g. "unix:/run/dir/<name>.sock".
        transport: what it speaks there: "grpc" (`Environment/Connect`) or "frames".
        pid: its process id.
        log_path: the file its stdout and stderr go to.
        span_file: the file it appends its finished spans to, when its launcher gave it one
            (the env host's trace view: `platform_contracts.recent_spans.SpanFile`).
    """

    transport: Transport
    span_file: Path | None = None

    def __init__(
        self,
        process: Child,
        address: str,
        log_path: Path,
        socket_path: Path,
        temp_dir: Path | None,
        transport: Transport = "grpc",
    ) -> None:
        self._process = process
        self.address = address
        self.transport = transport
        self.pid = process.pid
        self.log_path = log_path
        self._socket_path = socket_path
        self._temp_dir = temp_dir
        self._relay: asyncio.Future[None] | None = None

    def relay_output(self, **fields: str) -> None:
        """Copy the process's output pipe to its log as JSON lines (`relay_json_lines`), until it closes."""
        assert self._process.stdout is not None
        self._relay = asyncio.ensure_future(relay_json_lines(self._process.stdout, self.log_path, **fields))

    async def _output_written(self) -> None:
        """Once the process ended: wait (briefly) until the relay wrote the last of its output."""
        if self._relay is not None and not self._relay.done():
            with contextlib.suppress(TimeoutError, asyncio.CancelledError, OSError):
                await asyncio.wait_for(self._relay, _RELAY_DRAIN_S)

    def alive(self) -> bool:
        return self._process.returncode is None

    @property
    def returncode(self) -> int | None:
        """The exit code once it has exited (negative: killed by that signal), else None."""
        return self._process.returncode

    def how_it_ended(self) -> str:
        """"exited with code N" or "was killed by SIGSEGV" once it has exited; "" while it runs."""
        code = self._process.returncode
        if code is None:
            return ""
        if code >= 0:
            return f"exited with code {code}"
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"

    def log_tail(self, lines: int = 40) -> str:
        return read_tail(self.log_path, lines)

    async def wait(self) -> int:
        """Wait for the process to exit; returns its exit code (negative: killed by that signal)."""
        code = await self._process.wait()
        await self._output_written()
        self._cleanup()
        return code

    async def stop(self, timeout: float = 5.0) -> None:
        """SIGTERM, then SIGKILL after `timeout` seconds; idempotent."""
        if self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._process.terminate()
            try:
                await asyncio.wait_for(self._process.wait(), timeout)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    self._process.kill()
                await self._process.wait()
        await self._output_written()
        self._cleanup()

    def _cleanup(self) -> None:
        with contextlib.suppress(OSError):
            self._socket_path.unlink(missing_ok=True)
        if self._temp_dir is not None:
            shutil.rmtree(self._temp_dir, ignore_errors=True)
            self._temp_dir = None

    def __repr__(self) -> str:
        return (f"InstanceProcess(pid={self.pid}, address={self.address!r}, transport={self.transport!r}, "
                f"alive={self.alive()})")


def server_command(spec: LaunchSpec, listen: str, transport: Transport = "grpc",
                   kwargs_file: Path | None = None) -> list[str]:
    """The command line of the environment server for `spec` (`--transport frames` when asked:
    gRPC is the server's default). With `kwargs_file`, the kwargs are read from that file
    (`write_kwargs_file`), never put on the command line: a command line is limited (128 KiB an
    argument on Linux) and readable by every user of the machine.

    Raises:
        LaunchError: the spec names neither or both of a Gymnasium id and a factory, or an image.
    """
    if bool(spec.gymnasium_id) == bool(spec.factory) or spec.image:
        raise LaunchError(f"a launch spec needs exactly one of gymnasium_id and factory, got {spec!r}")
    command = [sys.executable, "-m", "platform_sdk"]
    if spec.gymnasium_id:
        command += ["--gym-id", spec.gymnasium_id]
    else:
        command += ["--factory", spec.factory]
        if spec.path:
            command += ["--path", spec.path]
    if kwargs_file is not None:
        command += ["--kwargs-file", str(kwargs_file)]
    else:
        command += ["--kwargs", kwargs_json(spec)]
    if transport != "grpc":
        command += ["--transport", transport]
    return command + server_options(spec) + ["--listen", listen]


def kwargs_json(spec: LaunchSpec) -> str:
    """The spec's kwargs as JSON.

    Raises:
        LaunchError: they are not JSON.
    """
    try:
        return json.dumps(spec.kwargs)
    except (TypeError, ValueError) as exc:
        raise LaunchError(f"the kwargs of {spec.gymnasium_id or spec.factory} are not JSON: {exc}") from None


def write_kwargs_file(spec: LaunchSpec, path: Path) -> Path:
    """Write the spec's kwargs (JSON) to `path`, readable by this user only; returns `path`."""
    text = kwargs_json(spec).encode()
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        file.write(text)
    return path


def server_options(spec: LaunchSpec) -> list[str]:
    """The server's option arguments for `spec`: `--jpeg-quality` (none for the server's
    default) and `--num-envs` (none for one environment)."""
    options = ["--jpeg-quality", str(spec.jpeg_quality)] if spec.jpeg_quality else []
    if spec.num_envs > 1:
        options += ["--num-envs", str(spec.num_envs)]
    return options


async def launch_process(
    spec: LaunchSpec,
    run_dir: Path,
    name: str,
    *,
    ready_timeout: float = 60.0,
    transport: Transport = "grpc",
    env: Mapping[str, str] | None = None,
) -> InstanceProcess:
    """Start an environment server process for `spec` (a Gymnasium id or a factory, not an
    image) and wait until it serves.

    The env host asks for `transport="frames"` (its own instances: the cheap framed link of
    `platform_envhost.instance_link`); gRPC stays the default for every other caller
    (`platform-check` speaks the environment protocol as users' servers do).

    Args:
        spec: what to run.
        run_dir: where its log (`<name>.log`) and socket (`<name>.sock`) go; a socket path
            that would be too long goes in a short temporary folder instead.
        name: the instance's name, unique within `run_dir`.
        ready_timeout: seconds to wait for its READY line.
        transport: what it is to speak on its socket.
        env: its environment (default: this process's); PYTHONUNBUFFERED=1 is added. The env
            host gives its instances, which run users' code, one without its own settings.

    Raises:
        LaunchError: the process exited before it was ready, or did not get ready in time
            (it is then killed); the error carries the log tail.
    """
    run_dir = Path(run_dir).absolute()
    run_dir.mkdir(parents=True, exist_ok=True)
    log_path = run_dir / f"{name}.log"
    socket_path, temp_dir = _socket_path(run_dir, name)
    # The kwargs go in a file the server reads at start (removed once it serves), never on its
    # command line.
    kwargs_file = write_kwargs_file(spec, run_dir / f"{name}.kwargs.json")
    command = server_command(spec, f"unix:{socket_path}", transport, kwargs_file)
    what = spec.gymnasium_id or spec.factory
    environment = dict(os.environ if env is None else env, PYTHONUNBUFFERED="1", **die_with_parent_env())
    json_lines = environment.get(LOG_FORMAT_VARIABLE, "").strip().lower() == "json"
    with open(log_path, "wb") as log:  # noqa: ASYNC230 - a local file, created once
        try:
            # no Python runs in the forked child (child_process); the server sets its own death
            # signal (parent_death)
            process = await start_child(command, stdin=DEVNULL, stdout=PIPE if json_lines else log,
                                        stderr=STDOUT if json_lines else log, env=environment,
                                        start_new_session=True)
        except OSError as exc:
            if temp_dir is not None:
                shutil.rmtree(temp_dir, ignore_errors=True)
            raise LaunchError(f"cannot start the instance {name} of {what}: {exc}") from None
    instance = InstanceProcess(process, f"unix:{socket_path}", log_path, socket_path, temp_dir, transport)
    if json_lines:
        instance.relay_output(instance=name)
    try:
        try:
            instance.address = await wait_ready(instance, ready_timeout)
        finally:
            kwargs_file.unlink(missing_ok=True)  # read at start: ready or not, it is not needed again
    except LaunchError as exc:
        await instance.stop(timeout=1.0)
        raise LaunchError(f"the instance {name} of {what} {exc.args[0]}", instance.log_tail()) from None
    except BaseException:  # cancelled: leave nothing behind
        await instance.stop(timeout=1.0)
        raise
    return instance


async def wait_ready(instance: InstanceProcess, timeout: float) -> str:
    """Wait for the `READY <address>` line in the instance's log; returns that address.

    Raises:
        LaunchError: the process exited first, or no READY line came within `timeout` seconds.
    """
    deadline = time.monotonic() + timeout
    offset, pending = 0, b""
    while True:
        chunk = _read_from(instance.log_path, offset)
        offset += len(chunk)
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            if (address := ready_address(line)) is not None:
                return address
        if not instance.alive():
            raise LaunchError(f"exited with code {instance.returncode} before it was ready")
        if time.monotonic() > deadline:
            raise LaunchError(f"was not ready within {timeout:g} s")
        await asyncio.sleep(_POLL_S)


def ready_address(line: bytes) -> str | None:
    """The address of a `READY <address>` line, as printed or wrapped into a JSON line; else None."""
    if line.startswith(b"{") and b'READY ' in line:
        try:
            message = json.loads(line).get("message", "")
        except (ValueError, AttributeError):
            return None
        line = message.encode() if isinstance(message, str) else b""
    if line.startswith(b"READY "):
        return line[len(b"READY ") :].decode().strip()
    return None


async def relay_json_lines(stream: asyncio.StreamReader, log_path: Path, **fields: str) -> None:
    """Append every line `stream` gives to `log_path` as a JSON line (`as_json_line`: service
    `instance` and `fields`), flushed as it comes, until the stream ends."""
    pending = b""
    with open(log_path, "ab") as log:  # noqa: ASYNC230 - a local file: the writes are small and rare
        while chunk := await stream.read(_RELAY_CHUNK):
            *lines, pending = (pending + chunk).split(b"\n")
            if len(pending) > _RELAY_CHUNK:  # a very long line without its end yet: as it is so far
                lines.append(pending)
                pending = b""
            if lines:
                log.write(_as_json_lines(lines, fields))
                log.flush()
        if pending:
            log.write(_as_json_lines([pending], fields))


def _as_json_lines(lines: list[bytes], fields: dict[str, str]) -> bytes:
    return "".join(as_json_line(line.decode(errors="replace").rstrip("\r"), INSTANCE_SERVICE, **fields) + "\n"
                   for line in lines).encode()


def _read_from(path: Path, offset: int) -> bytes:
    """What a (small, local) log file holds from `offset` on."""
    try:
        with open(path, "rb") as file:
            file.seek(offset)
            return file.read()
    except OSError:
        return b""


def _socket_path(run_dir: Path, name: str) -> tuple[Path, Path | None]:
    path = run_dir / f"{name}.sock"
    if len(str(path)) < MAX_SOCKET_PATH:
        return path, None
    temp_dir = Path(tempfile.mkdtemp(prefix="simenv-"))
    path = temp_dir / f"{name}.sock"
    if len(str(path)) >= MAX_SOCKET_PATH:
        path = temp_dir / f"{hashlib.sha1(name.encode()).hexdigest()[:16]}.sock"
    return path, temp_dir


def read_tail(path: Path, lines: int = 40, max_bytes: int = 64 * 1024) -> str:
    """The last `lines` lines of a text file ("" when it does not exist)."""
    try:
        with open(path, "rb") as file:
            file.seek(0, os.SEEK_END)
            size = file.tell()
            file.seek(max(0, size - max_bytes))
            data = file.read()
    except OSError:
        return ""
    return "\n".join(data.decode(errors="replace").splitlines()[-lines:])
