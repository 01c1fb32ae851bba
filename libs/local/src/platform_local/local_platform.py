"""`LocalPlatform`: nats-server and every service as child processes, from Python."""

from __future__ import annotations

import os
import secrets
import signal
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Self, TextIO

from platform_contracts.log_lines import LOG_FORMAT_VARIABLE, LogFormatError, json_line, log_format_from

from platform_local import nats_process
from platform_local.errors import ConfigError, LocalPlatformError, ServiceExited, StartTimeout
from platform_local.restarts import RestartPolicy, ServiceRestarts
from platform_local.services import (
    MODE,
    MODES,
    SERVICES,
    STEP_TICKET_SECRET,
    PlatformLayout,
    missing_services,
    module_of,
    service_spec,
)
from platform_local.supervisor import ChildProcess, ServiceSpec, Supervisor

READY_PATH = "/v0/envs"


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def port_in_use(host: str, port: int) -> bool:
    """Whether a server could not listen on host:port (SO_REUSEADDR, as servers bind: a port
    with only TIME_WAIT connections left is free)."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return True
    return False


def _never() -> bool:
    return False


class LocalPlatform:
    """The whole platform as local processes: nats-server, broker, envhost, recorder, gateway.

    Args:
        data_dir: NATS store (``nats/``), logs (``logs/<service>.log``), database, env host runs.
        port: the gateway's port; None picks a free one.
        extra_env: variables given to every service, over everything else.
        host: the gateway's bind address.
        nats_url: an external NATS server to use; then none is started.
        nats_port: the port of the NATS server started here; None lets it pick a free one.
        recordings_dir: the recorder's output (default ``<data_dir>/recordings``).
        base_env: the environment the children inherit (default os.environ).
        cwd: the children's working directory (default the current one).
        echo: a stream to copy the children's output to, prefixed by service name.
        services: which services to run, in start order.
        commands: argv per service replacing ``python -m platform_<name>`` (stand-ins in tests).
        start_timeout: seconds to wait for NATS, then for the gateway to answer GET /v0/envs.
        stop_timeout: seconds each child gets after SIGTERM before SIGKILL.
        restart_policy: when given, a child that exits unasked is started again (see
            `keep_running` and `platform_local.restarts`), also while starting; None: such an
            exit is an error at once (tests that kill services themselves want that).
        say: where restarts and their reasons are told (default: the echo stream, else nowhere).

    ``PLATFORM_MODE=managed`` (in `extra_env` or `base_env`) with the NATS started here: the
    server gets a user per service with the subjects it needs (``platform_bus.permissions``) and
    a random password per platform, and each service its own (PLATFORM_NATS_USER and
    PLATFORM_NATS_PASSWORD); a client without them is refused, so environment instances, which
    get none, cannot use the bus. With an external NATS (`nats_url`) the services' own
    PLATFORM_NATS_* settings are passed through unchanged.
    """

    def __init__(self, data_dir: str | os.PathLike[str], port: int | None = None,
                 extra_env: Mapping[str, str] | None = None, *, host: str = "127.0.0.1",
                 nats_url: str | None = None, nats_port: int | None = None,
                 recordings_dir: str | os.PathLike[str] | None = None,
                 base_env: Mapping[str, str] | None = None, cwd: str | os.PathLike[str] | None = None,
                 echo: TextIO | None = None, services: Sequence[str] = SERVICES,
                 commands: Mapping[str, list[str]] | None = None,
                 start_timeout: float = 60.0, stop_timeout: float = 10.0,
                 restart_policy: RestartPolicy | None = None, say: Callable[[str], None] | None = None) -> None:
        self.data_dir = Path(data_dir).absolute()
        self.host = host
        self.port = port if port is not None else free_port(self._connect_host)
        self.extra_env = dict(extra_env or {})
        self.external_nats_url = nats_url
        self.nats_port = nats_port
        self.recordings_dir = Path(recordings_dir).absolute() if recordings_dir else self.data_dir / "recordings"
        self.base_env = dict(os.environ if base_env is None else base_env)
        # One secret for the gateway and every env host (so steps can take the direct path), the
        # same across restarts: PLATFORM_STEP_TICKET_SECRET when set (empty: no tickets, no
        # direct path), else a random one per platform.
        given = self.extra_env.get(STEP_TICKET_SECRET, self.base_env.get(STEP_TICKET_SECRET))
        self.step_ticket_secret = secrets.token_urlsafe(32) if given is None else given
        self.mode = self.extra_env.get(MODE, self.base_env.get(MODE)) or MODES[0]
        # PLATFORM_LOG_FORMAT, which every service also reads: json makes every log (the
        # children's files, the echo, the launcher's own lines) one JSON object per line.
        self.log_format_setting = self.extra_env.get(LOG_FORMAT_VARIABLE, self.base_env.get(LOG_FORMAT_VARIABLE, ""))
        self.json_lines = self.log_format_setting.strip().lower() == "json"
        # Managed mode on our own NATS: a password per service user, the same across restarts.
        self.nats_passwords = ({name: secrets.token_urlsafe(32) for name in SERVICES}
                               if self.mode == "managed" and not nats_url else {})
        self.cwd = Path(cwd) if cwd is not None else None
        self.services = tuple(services)
        self.commands = dict(commands or {})
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self.supervisor = Supervisor(self.data_dir / "logs", echo, json_lines=self.json_lines)
        self.restarts = (ServiceRestarts(restart_policy, self.start_service, say or self._say_to(echo))
                         if restart_policy is not None else None)

    def _say_to(self, stream: TextIO | None) -> Callable[[str], None]:
        def say(message: str) -> None:
            if stream is not None:
                line = json_line("launcher", message, logger="platform_local") if self.json_lines else message
                print(line, file=stream, flush=True)

        return say

    @property
    def _connect_host(self) -> str:
        return "127.0.0.1" if self.host in ("0.0.0.0", "", "::") else self.host

    @property
    def url(self) -> str:
        """The gateway's base URL, e.g. ``http://127.0.0.1:8000``."""
        return f"http://{self._connect_host}:{self.port}"

    @property
    def nats_url(self) -> str:
        if self.external_nats_url:
            return self.external_nats_url
        if self.nats_port is None:
            raise LocalPlatformError("NATS has not started yet: its port is not known")
        return nats_process.nats_url("127.0.0.1", self.nats_port)

    @property
    def logs_dir(self) -> Path:
        return self.data_dir / "logs"

    def _layout(self) -> PlatformLayout:
        return PlatformLayout(self.data_dir, self.recordings_dir, self.nats_url, self.host, self.port,
                              self.step_ticket_secret, self.nats_passwords)

    def _spec(self, name: str) -> ServiceSpec:
        spec = service_spec(name, self._layout(), self.base_env, self.extra_env, self.cwd)
        if name in self.commands:
            spec.argv = list(self.commands[name])
        return spec

    def check_config(self) -> None:
        """Fails before anything starts: unknown or missing services, a busy gateway port, an
        unknown PLATFORM_MODE (or managed mode without platform_bus installed) or PLATFORM_LOG_FORMAT.

        Raises:
            ConfigError: naming what to fix.
        """
        if self.mode not in MODES:
            raise ConfigError(f"{MODE}={self.mode!r} is not one of {', '.join(MODES)}")
        try:
            log_format_from({LOG_FORMAT_VARIABLE: self.log_format_setting})
        except LogFormatError as exc:
            raise ConfigError(str(exc)) from None
        if self.nats_passwords:
            self._authorization()
        unknown = [name for name in self.services if name not in SERVICES]
        if unknown:
            raise ConfigError(f"unknown service(s): {', '.join(unknown)} (known: {', '.join(SERVICES)})")
        missing = missing_services(n for n in self.services if n not in self.commands)
        if missing:
            packages = ", ".join(module_of(n) for n in missing)
            raise ConfigError(f"not installed (or no __main__): {packages}; run `uv sync --all-packages`")
        if "gateway" in self.services and port_in_use(self.host, self.port):
            raise ConfigError(f"port {self.port} on {self.host} is in use: stop what runs there "
                              f"or set PLATFORM_PORT")

    def start(self, should_abort: Callable[[], bool] = _never) -> LocalPlatform:
        """Starts NATS (unless external), then every service; returns once the gateway answers.

        Args:
            should_abort: polled while waiting; when it returns true, start returns early
                (a signal arrived) and the caller stops the platform.

        Raises:
            ConfigError: see `check_config`; nothing was started.
            ServiceExited: a child died while starting (with a restart policy: `CrashLoop`, it
                kept dying); the others are stopped.
            StartTimeout: not ready within `start_timeout` (the others are stopped).
        """
        self.check_config()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.recordings_dir.mkdir(parents=True, exist_ok=True)
        try:
            if not self.external_nats_url:
                self.start_service(nats_process.NAME, should_abort)
            for name in self.services:
                if should_abort():
                    return self
                self.start_service(name)
            if "gateway" in self.services:
                self.wait_ready(should_abort)
        except BaseException:
            self.stop()
            raise
        return self

    def start_service(self, name: str, should_abort: Callable[[], bool] = _never) -> ChildProcess:
        """Starts (or starts again) one child; for ``nats`` waits until it is ready."""
        if name == nats_process.NAME:
            return self._start_nats(should_abort)
        child = self.supervisor.add(self._spec(name))
        child.start()
        return child

    def _start_nats(self, should_abort: Callable[[], bool]) -> ChildProcess:
        if self.external_nats_url:
            raise LocalPlatformError(f"NATS is external ({self.external_nats_url}): not started here")
        store = self.data_dir / "nats"
        store.mkdir(parents=True, exist_ok=True)
        env = dict(self.base_env)
        authorization = self._authorization() if self.nats_passwords else ""
        child = self.supervisor.add(nats_process.nats_spec(store, self.nats_port, env, authorization=authorization))
        child.start()
        listening = child.wait_for_line(nats_process.LISTENING, self.start_timeout, should_abort)
        if listening is not None and self.nats_port is None:
            self.nats_port = int(listening["port"])  # a restart keeps this port
        child.wait_for_line(nats_process.READY, self.start_timeout, should_abort)
        return child

    def _authorization(self) -> str:
        """The NATS config's users (managed mode): one per service, its password, its subjects.

        Raises:
            ConfigError: platform_bus is not installed here.
        """
        try:
            from platform_bus.permissions import authorization_block, service_users
        except ImportError as exc:
            raise ConfigError(f"{MODE}=managed needs platform_bus (the bus permissions) installed "
                              f"beside the launcher: {exc}; run `uv sync --all-packages`") from None
        return authorization_block(service_users(self.nats_passwords))

    def wait_ready(self, should_abort: Callable[[], bool] = _never, timeout: float | None = None) -> None:
        """Polls GET /v0/envs (with the API token or the admin token, when the platform has one) until the gateway
        answers 200; fails fast when a child dies (with a restart policy: starts it again, and
        fails when it keeps dying).

        Raises:
            ServiceExited: a child exited meanwhile (`CrashLoop`: it kept exiting).
            StartTimeout: no answer in time.
        """
        deadline = time.monotonic() + (self.start_timeout if timeout is None else timeout)
        last = "no answer"
        token = next((env[name] for name in ("PLATFORM_API_TOKEN", "PLATFORM_ADMIN_TOKEN")
                      for env in (self.extra_env, self.base_env) if env.get(name)), None)
        ready = urllib.request.Request(self.url + READY_PATH,
                                       headers={"Authorization": f"Bearer {token}"} if token else {})
        while not should_abort():
            self.keep_running()
            try:
                with urllib.request.urlopen(ready, timeout=2.0) as response:
                    if response.status == 200:
                        return
                    last = f"HTTP {response.status}"
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code}"
            except (urllib.error.URLError, OSError) as exc:
                last = str(getattr(exc, "reason", exc))
            if time.monotonic() > deadline:
                raise StartTimeout(f"the gateway did not answer GET {self.url}{READY_PATH} within "
                                   f"{self.start_timeout:g}s (last: {last}); logs in {self.logs_dir}")
            time.sleep(0.2)

    def check(self) -> None:
        """Raises ServiceExited for the first child that exited without being asked to."""
        if error := self.supervisor.unexpected_exit():
            raise error

    def keep_running(self) -> None:
        """One supervision pass: with a restart policy, starts again the children that exited
        unasked (each after its delay); without one, the same as `check`.

        Raises:
            CrashLoop: a child kept crashing (with a restart policy).
            ServiceExited: a child exited unasked (without one).
        """
        if self.restarts is None:
            self.check()
        else:
            self.restarts.watch(list(self.supervisor.children.values()))

    def unexpected_exit(self) -> ServiceExited | None:
        """The first child that exited without being asked to, or None."""
        return self.supervisor.unexpected_exit()

    def stop_service(self, name: str, sig: int = signal.SIGTERM, timeout: float | None = None) -> int | None:
        """Stops one child with `sig` (SIGKILL after the timeout); returns its exit status."""
        return self.supervisor[name].stop(sig, self.stop_timeout if timeout is None else timeout)

    def restart(self, name: str, sig: int = signal.SIGTERM) -> ChildProcess:
        """Stops one child (with `sig`) and starts it again with the same settings and port."""
        self.stop_service(name, sig)
        return self.start_service(name)

    def pids(self) -> dict[str, int]:
        """The pids of the running children by name (``nats`` included when started here)."""
        return self.supervisor.pids()

    def log_path(self, name: str) -> Path:
        return self.supervisor[name].log_path

    def stop(self) -> None:
        """Stops every child, gateway first and NATS last; safe to call twice."""
        self.supervisor.stop_all(self.stop_timeout)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = ["LocalPlatform", "free_port", "port_in_use"]
