"""Environment servers (`python -m platform_sdk`) as child processes on Unix sockets, and the
vocabulary of every instance: `LaunchSpec`, `LaunchError`, `InstanceProcess`.

An instance is killed when the process that launched it dies (Linux parent-death signal), so
instances never outlive their env host. Its stdout and stderr go to `<run_dir>/<name>.log`.
`platform_sdk.launch.instance_launch` starts either kind of instance: these processes, or a `docker
run` of an image (`platform_sdk.launch.containers`).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import hashlib
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Transport = Literal["grpc", "frames"]
"""How an instance is spoken to: the environment protocol's gRPC stream, or the same messages
as length-prefixed frames on its Unix socket (`python -m platform_sdk --transport frames`)."""

# Unix socket paths are limited to 107 bytes; keep well under.
MAX_SOCKET_PATH = 100
_POLL_S = 0.01
_PR_SET_PDEATHSIG = 1


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
    """

    transport: Transport

    def __init__(
        self,
        process: asyncio.subprocess.Process,
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
    environment = dict(os.environ if env is None else env, PYTHONUNBUFFERED="1")
    with open(log_path, "wb") as log:  # noqa: ASYNC230 - a local file, created once
        try:
            process = await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=environment,
                start_new_session=True,
                preexec_fn=die_with_parent(os.getpid()),
            )
        except OSError as exc:
            if temp_dir is not None:
                shutil.rmtree(temp_dir, ignore_errors=True)
            raise LaunchError(f"cannot start the instance {name} of {what}: {exc}") from None
    instance = InstanceProcess(process, f"unix:{socket_path}", log_path, socket_path, temp_dir, transport)
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
            if line.startswith(b"READY "):
                return line[len(b"READY ") :].decode().strip()
        if not instance.alive():
            raise LaunchError(f"exited with code {instance.returncode} before it was ready")
        if time.monotonic() > deadline:
            raise LaunchError(f"was not ready within {timeout:g} s")
        await asyncio.sleep(_POLL_S)


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


def die_with_parent(parent_pid: int) -> Callable[[], None] | None:
    """A preexec_fn that has the kernel SIGKILL the child when its parent dies (Linux only)."""
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)

    def preexec() -> None:
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent_pid:  # the parent died before prctl took effect
            os.kill(os.getpid(), signal.SIGKILL)

    return preexec


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
