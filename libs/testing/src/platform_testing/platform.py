"""The whole platform as real processes, for cross-service tests.

`PlatformStack` runs nats-server and the services (all of them unless told which) through
`platform_local.LocalPlatform` in a temporary directory, on free ports, with no PLATFORM_*
variable of the caller's environment leaking in. Tests can kill or restart one service and
check that nothing is left running afterwards.

Fixtures (not registered by default; load this module as a pytest plugin):
    platform_stack          one platform per test module, of the session services (SESSION_SERVICES)
    session_platform_stack  one platform for the whole test session
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Self

import pytest
from platform_local import SERVICES, LocalPlatform
from platform_local.procs import descendants, same_process_alive, start_time


def clean_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """`base` (default os.environ) without any PLATFORM_* variable."""
    return {k: v for k, v in (os.environ if base is None else base).items() if not k.startswith("PLATFORM_")}


class PlatformStack:
    """One platform under `root`: ``root/data`` (NATS store, logs, database), ``root/recordings``,
    ``root/cache`` (the gateway's cache, so the user's ``~/.cache`` is never touched),
    ``root/ssh/id_ed25519`` (the machines service's key, PLATFORM_SSH_KEY, never the user's).

    Args:
        root: an empty directory of the test's; the services run with it as working directory.
        extra_env: variables given to every service (e.g. ``{"PLATFORM_IDLE_TIMEOUT": "2"}``);
            a ``PLATFORM_CACHE_DIR`` here replaces ``root/cache``.
        services: which services to run, in start order.
        start_timeout: seconds to wait for the gateway to answer GET /v0/envs.
    """

    def __init__(self, root: str | os.PathLike[str], extra_env: Mapping[str, str] | None = None,
                 services: Sequence[str] = SERVICES, start_timeout: float = 90.0) -> None:
        self.root = Path(root)
        extra_env = {"PLATFORM_CACHE_DIR": str(self.root.resolve() / "cache"),
                     # a killed recorder's successor takes its session partitions this long after
                     "PLATFORM_RECORDER_LEASE_S": "3",
                     "PLATFORM_SSH_KEY": str(self.root.resolve() / "ssh" / "id_ed25519"), **(extra_env or {})}
        self.platform = LocalPlatform(self.root / "data", None, extra_env,
                                      recordings_dir=self.root / "recordings", base_env=clean_env(),
                                      cwd=self.root, services=services, start_timeout=start_timeout)
        self._seen: set[tuple[int, int | None]] = set()  # (pid, start time)

    @property
    def url(self) -> str:
        """The gateway, e.g. ``http://127.0.0.1:41234``."""
        return self.platform.url

    @property
    def nats_url(self) -> str:
        return self.platform.nats_url

    @property
    def step_ticket_secret(self) -> str:
        """The gateway's and env hosts' PLATFORM_STEP_TICKET_SECRET (random per platform unless
        `extra_env` sets it; empty: no tickets, no direct path)."""
        return self.platform.step_ticket_secret

    @property
    def recordings(self) -> Path:
        return self.platform.recordings_dir

    @property
    def cache_dir(self) -> Path:
        """The gateway's cache (PLATFORM_CACHE_DIR)."""
        return Path(self.platform.extra_env["PLATFORM_CACHE_DIR"])

    @property
    def data_dir(self) -> Path:
        return self.platform.data_dir

    @property
    def logs_dir(self) -> Path:
        return self.platform.logs_dir

    def start(self) -> PlatformStack:
        self.platform.start()
        self._remember()
        return self

    def stop(self) -> list[int]:
        """Stops everything; returns the pids (services, NATS, env instances) still alive after 5 s."""
        self._remember()
        self.platform.stop()
        deadline = time.monotonic() + 5.0
        while (left := self._alive()) and time.monotonic() < deadline:
            time.sleep(0.05)
        return left

    def _alive(self) -> list[int]:
        return sorted(pid for pid, started in self._seen if same_process_alive(pid, started))

    def pid(self, name: str) -> int | None:
        """The pid of a running service (``nats`` included), else None."""
        return self.platform.pids().get(name)

    def tree(self) -> list[int]:
        """Every live process the platform started: services, NATS and their descendants."""
        return [p for pid in self.platform.pids().values() for p in (pid, *descendants(pid))]

    def kill(self, name: str, sig: int = signal.SIGKILL, timeout: float = 10.0) -> int | None:
        """Sends `sig` to one service and waits for it to exit (SIGKILL after `timeout`).

        Returns:
            Its exit status (negative: the signal). The exit does not count as a failure.
        """
        self._remember()
        return self.platform.stop_service(name, sig, timeout)

    def start_service(self, name: str, wait_ready: bool = True) -> None:
        """Starts a stopped service again (same settings, same ports)."""
        self.platform.start_service(name)
        if wait_ready and name in ("broker", "gateway", "nats"):
            self.wait_ready()
        self._remember()

    def restart(self, name: str, sig: int = signal.SIGTERM, wait_ready: bool = True) -> None:
        """Stops one service with `sig` and starts it again; for the broker, the gateway or
        NATS, waits until the gateway answers GET /v0/envs again."""
        self.kill(name, sig)
        self.start_service(name, wait_ready)

    def wait_ready(self, timeout: float = 30.0) -> None:
        """Waits until the gateway answers GET /v0/envs (so the broker is up too)."""
        self.platform.wait_ready(timeout=timeout)

    def check(self) -> None:
        """Raises platform_local.ServiceExited when a service died without being asked to."""
        self.platform.check()

    def log(self, name: str) -> str:
        """Everything one service printed (all its runs)."""
        path = self.platform.log_path(name)
        return path.read_text(errors="replace") if path.exists() else ""

    def _remember(self) -> None:
        self._seen.update((pid, start_time(pid)) for pid in self.tree())

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextmanager
def running_platform(root: str | os.PathLike[str], **kwargs: object) -> Iterator[PlatformStack]:
    """A started PlatformStack; on exit stops it and fails if any of its processes is left.

    Raises:
        AssertionError: processes left running after the stop (their pids).
    """
    stack = PlatformStack(root, **kwargs)  # type: ignore[arg-type]
    stack.start()
    try:
        yield stack
    finally:
        left = stack.stop()
        if left:
            raise AssertionError(f"platform processes left running after stop: {left}")


# The services of sessions and recordings: a module that needs the machines or evals service starts
# its own platform with them (running_platform's default); leaving them out saves each module's
# platform about 4 s of CPU (their imports) on a busy test machine.
SESSION_SERVICES: tuple[str, ...] = tuple(name for name in SERVICES if name not in ("machines", "evals"))


@pytest.fixture(scope="module")
def platform_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    """The platform's session services (broker, env host, recorder, gateway) as processes, one
    platform per test module."""
    with running_platform(tmp_path_factory.mktemp("platform"), services=SESSION_SERVICES) as stack:
        yield stack


@pytest.fixture(scope="session")
def session_platform_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    """The whole platform as processes, one for the whole test session."""
    with running_platform(tmp_path_factory.mktemp("platform")) as stack:
        yield stack
