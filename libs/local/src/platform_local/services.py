"""The platform's services, in start order, and the environment each one runs with."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from platform_local.supervisor import ServiceSpec

SERVICES: tuple[str, ...] = ("broker", "envhost", "recorder", "machines", "evals", "gateway")
"""Start order; they stop in the reverse order."""

_GATEWAY_ONLY = ("PLATFORM_HOST", "PLATFORM_PORT")
STEP_TICKET_SECRET = "PLATFORM_STEP_TICKET_SECRET"
MODE = "PLATFORM_MODE"
MODES = ("self-hosted", "managed")
# A service's own NATS user in managed mode (read by platform_bus.connection.connect).
NATS_USER = "PLATFORM_NATS_USER"
NATS_PASSWORD = "PLATFORM_NATS_PASSWORD"


def module_of(name: str) -> str:
    """The package run as ``python -m <package>`` for a service."""
    return f"platform_{name}"


def missing_services(names: Iterable[str]) -> list[str]:
    """The services whose package (or its ``__main__``) is not importable from this interpreter."""
    missing = []
    for name in names:
        try:
            found = importlib.util.find_spec(f"{module_of(name)}.__main__") is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            missing.append(name)
    return missing


@dataclass(frozen=True)
class PlatformLayout:
    """Where one running platform keeps its things and how its parts find each other.

    Attributes:
        data_dir: the launcher's data (``./data``): nats store, logs, database, env host runs.
        recordings_dir: the recorder's output.
        nats_url: the NATS server every service connects to.
        host: the gateway's bind address.
        port: the gateway's port.
        step_ticket_secret: what the gateway signs step tickets with and every env host checks
            them with (PLATFORM_STEP_TICKET_SECRET), unless the environment sets one.
        nats_passwords: managed mode on the launcher's own NATS: each service's password on it
            (its user is named as the service); empty otherwise (no NATS users).
    """

    data_dir: Path
    recordings_dir: Path
    nats_url: str
    host: str
    port: int
    step_ticket_secret: str = ""
    nats_passwords: Mapping[str, str] = field(default_factory=dict, repr=False)

    @property
    def logs_dir(self) -> Path:
        return self.data_dir / "logs"

    @property
    def nats_store(self) -> Path:
        return self.data_dir / "nats"


def service_env(name: str, layout: PlatformLayout, base_env: Mapping[str, str],
                extra_env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of one service.

    `base_env` (usually os.environ) wins over the launcher's defaults for the storage
    settings, so a user's PLATFORM_DATABASE_URL is kept; the NATS URL, the gateway's host and
    port are the launcher's; `extra_env` wins over everything but the service's own NATS user
    (managed mode on the launcher's NATS: PLATFORM_NATS_USER, its name, and PLATFORM_NATS_PASSWORD).
    Only the gateway sees PLATFORM_HOST/PLATFORM_PORT, so another service's own ``port`` setting
    cannot pick them up.
    """
    env = dict(base_env)
    env.setdefault("PLATFORM_DATABASE_URL", f"sqlite+aiosqlite:///{layout.data_dir.resolve() / 'platform.db'}")
    env.setdefault("PLATFORM_ENVHOST_RUN_DIR", str(layout.data_dir.resolve() / "envhost"))
    env.setdefault("PLATFORM_RECORDINGS", str(layout.recordings_dir.resolve()))
    env.setdefault("PLATFORM_WADS", str(layout.data_dir.resolve() / "wads"))  # uploaded Doom maps
    if layout.step_ticket_secret:
        env.setdefault(STEP_TICKET_SECRET, layout.step_ticket_secret)
    env["PLATFORM_NATS_URL"] = layout.nats_url
    env["PYTHONUNBUFFERED"] = "1"
    for key in _GATEWAY_ONLY:
        env.pop(key, None)
    if name == "gateway":
        env["PLATFORM_HOST"] = layout.host
        env["PLATFORM_PORT"] = str(layout.port)
    if name == "machines":  # where an experiment's forwarded port leads: this gateway
        host = "127.0.0.1" if layout.host in ("0.0.0.0", "::", "") else layout.host
        env.setdefault("PLATFORM_EXPERIMENTS_GATEWAY", f"{host}:{layout.port}")
    env.update(extra_env or {})
    password = layout.nats_passwords.get(name)
    if password:
        env[NATS_USER] = name
        env[NATS_PASSWORD] = password
    if name != "gateway":
        for key in _GATEWAY_ONLY:
            env.pop(key, None)
    return env


def service_spec(name: str, layout: PlatformLayout, base_env: Mapping[str, str],
                 extra_env: Mapping[str, str] | None = None, cwd: Path | None = None) -> ServiceSpec:
    """How to run one service: ``<this python> -m platform_<name>`` with its environment."""
    return ServiceSpec(name=name, argv=[sys.executable, "-m", module_of(name)],
                       env=service_env(name, layout, base_env, extra_env), cwd=cwd)
