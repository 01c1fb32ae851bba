"""Child processes with their output captured: start, watch, stop in reverse order.

Each child runs in its own process group (so a Ctrl-C at the terminal reaches only the
launcher, which then stops the children in order) and, on Linux, gets SIGTERM if the
launcher dies (parent-death signal), so even a killed launcher leaves no orphans.
Its output goes to ``<logs>/<name>.log`` and, when an echo stream is given, to that stream
prefixed by the service name. With JSON lines (``PLATFORM_LOG_FORMAT=json``) both get one JSON
object per line instead: a line the child wrote as a JSON object passes through whole, any other
(a library printing to stderr) is wrapped into one naming the child
(`platform_contracts.log_lines.as_json_line`), and the echo has no prefix.
"""

from __future__ import annotations

import collections
import ctypes
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from platform_contracts.log_lines import as_json_line, json_line

from platform_local.errors import LocalPlatformError, ServiceExited, StartTimeout

TAIL_LINES = 400
_PR_SET_PDEATHSIG = 1


@dataclass
class ServiceSpec:
    """How to run one child: its name, command line, environment and working directory."""

    name: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    echo: bool = True


def _parent_death_hook() -> Callable[[], None] | None:
    """A preexec function that asks Linux to SIGTERM the child when its parent thread dies."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def hook() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM))

    return hook


_DIE_WITH_PARENT = _parent_death_hook()


class Echo:
    """Writes children's lines to one stream, each prefixed by its service name (JSON lines: as
    they are, each names its service)."""

    def __init__(self, stream: TextIO, width: int = 8, json_lines: bool = False) -> None:
        self.stream = stream
        self.width = width
        self.json_lines = json_lines
        self._lock = threading.Lock()

    def write(self, name: str, line: str) -> None:
        text = f"{line}\n" if self.json_lines else f"{name:<{self.width}} | {line}\n"
        with self._lock:
            try:
                self.stream.write(text)
                self.stream.flush()
            except (OSError, ValueError):  # closed or broken stream: the log file still has it
                pass


class ChildProcess:
    """One supervised child process and the thread that reads its output."""

    def __init__(self, spec: ServiceSpec, log_path: Path, echo: Echo | None = None,
                 json_lines: bool = False) -> None:
        self.spec = spec
        self.json_lines = json_lines
        self.log_path = log_path
        self.echo = echo if spec.echo else None
        self.process: subprocess.Popen[bytes] | None = None
        self.expected_exit = False
        self._lines: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self._changed = threading.Condition()
        self._eof = False
        self._reader: threading.Thread | None = None
        self._starts = 0

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    @property
    def returncode(self) -> int | None:
        return self.process.poll() if self.process else None

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        """Starts the process (again, after a stop): its log is appended to, its tail reset."""
        if self.running:
            raise LocalPlatformError(f"{self.name} is already running (pid {self.pid})")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        mode = "w" if self._starts == 0 else "a"
        log = open(self.log_path, mode, encoding="utf-8", errors="replace")  # noqa: SIM115 (reader closes it)
        self._lines.clear()
        self._eof = False
        self.expected_exit = False
        hook = _DIE_WITH_PARENT if threading.current_thread() is threading.main_thread() else None
        try:
            self.process = subprocess.Popen(
                self.spec.argv,
                env=self.spec.env,
                cwd=self.spec.cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                process_group=0,
                # Safe with threads: the hook only calls an already-resolved libc function.
                preexec_fn=hook,  # noqa: PLW1509
            )
        except OSError as exc:
            log.close()
            raise LocalPlatformError(f"cannot start {self.name} ({self.spec.argv[0]}): {exc}") from exc
        self._starts += 1
        log.write(self._said(f"{self.name} started, pid {self.process.pid}: {' '.join(self.spec.argv)}") + "\n")
        log.flush()
        self._reader = threading.Thread(target=self._read, args=(self.process, log), daemon=True,
                                        name=f"{self.name}-output")
        self._reader.start()

    def _read(self, process: subprocess.Popen[bytes], log: TextIO) -> None:
        assert process.stdout is not None
        with log:
            for raw in process.stdout:
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                logged = as_json_line(line, self.name) if self.json_lines else line
                log.write(logged + "\n")
                log.flush()
                with self._changed:
                    self._lines.append(line)  # as printed: what wait_for_line and tails look at
                    self._changed.notify_all()
                if self.echo:
                    self.echo.write(self.name, logged)
            process.stdout.close()
            try:
                log.write(self._said(str(ServiceExited(self.name, process.wait(5), []))) + "\n")
            except subprocess.TimeoutExpired:  # it closed its output but runs on: its end goes unlogged
                pass
        with self._changed:
            self._eof = True
            self._changed.notify_all()

    def _said(self, message: str) -> str:
        """A line of the launcher's own in the child's log: `--- message`, or a JSON line."""
        return json_line(self.name, message, logger="platform_local") if self.json_lines else f"--- {message}"

    def tail(self, count: int = 30) -> list[str]:
        """The last `count` lines this run of the process printed."""
        with self._changed:
            return list(self._lines)[-count:]

    def wait_for_line(self, pattern: re.Pattern[str], timeout: float,
                      should_abort: Callable[[], bool] = lambda: False) -> re.Match[str] | None:
        """Waits for an output line matching `pattern`.

        Returns:
            The match, or None when `should_abort()` became true first.

        Raises:
            ServiceExited: the process ended before printing such a line.
            StartTimeout: no such line within `timeout` seconds.
        """
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for line in self._lines:
                    if match := pattern.search(line):
                        return match
                if self._eof:
                    break
                if should_abort():
                    return None
                left = deadline - time.monotonic()
                if left <= 0:
                    raise StartTimeout(f"{self.name} printed no line matching {pattern.pattern!r} within "
                                       f"{timeout:g}s; its log: {self.log_path}")
                self._changed.wait(min(left, 0.2))
        assert self.process is not None
        returncode = self.process.wait(5)
        raise ServiceExited(self.name, returncode, self.tail())

    def exited(self) -> ServiceExited:
        """This run's end as an error: its exit status and last lines (waits up to 1 s for the
        reader to take the last ones). Only for a process that has exited."""
        assert self.process is not None and self.process.returncode is not None
        if self._reader is not None:
            self._reader.join(1.0)
        return ServiceExited(self.name, self.process.returncode, self.tail())

    def send_signal(self, sig: int) -> None:
        """Sends `sig` to the process, marking its exit as expected."""
        if self.running:
            assert self.process is not None
            self.expected_exit = True
            self.process.send_signal(sig)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10.0) -> int | None:
        """Sends `sig`, waits up to `timeout` seconds, then SIGKILLs. Returns the exit status."""
        if self.process is None:
            return None
        self.expected_exit = True
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self._reader is not None:
            self._reader.join(2.0)
        return self.process.returncode


class Supervisor:
    """An ordered set of child processes; stops them in the reverse of the order they were added."""

    def __init__(self, logs_dir: Path, echo: TextIO | None = None, json_lines: bool = False) -> None:
        self.logs_dir = Path(logs_dir)
        self.json_lines = json_lines
        self.echo = Echo(echo, json_lines=json_lines) if echo is not None else None
        self.children: dict[str, ChildProcess] = {}

    def add(self, spec: ServiceSpec) -> ChildProcess:
        """Registers a child (not started yet); a later `add` of the same name replaces its spec."""
        if spec.name in self.children:
            child = self.children[spec.name]
            child.spec = spec
            return child
        child = ChildProcess(spec, self.logs_dir / f"{spec.name}.log", self.echo, self.json_lines)
        self.children[spec.name] = child
        if self.echo is not None:
            self.echo.width = max(self.echo.width, len(spec.name))
        return child

    def __getitem__(self, name: str) -> ChildProcess:
        try:
            return self.children[name]
        except KeyError:
            raise LocalPlatformError(f"no such service: {name} (known: {', '.join(self.children)})") from None

    def start(self, name: str) -> ChildProcess:
        child = self[name]
        child.start()
        return child

    def unexpected_exit(self) -> ServiceExited | None:
        """The first child that exited without being asked to, as an error, or None."""
        for child in self.children.values():
            if child.process is not None and not child.expected_exit and child.returncode is not None:
                return child.exited()
        return None

    def stop_all(self, timeout: float = 10.0) -> None:
        """Stops every child, last added first: SIGTERM, up to `timeout` s each, then SIGKILL."""
        for child in reversed(list(self.children.values())):
            child.stop(signal.SIGTERM, timeout)

    def pids(self) -> dict[str, int]:
        """The pids of the running children, by name."""
        return {name: c.pid for name, c in self.children.items() if c.running and c.pid is not None}

