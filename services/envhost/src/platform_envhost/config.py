"""Settings of the env host, from `PLATFORM_*` environment variables."""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path
from typing import Literal

from platform_bus.stream_settings import SessionsStreamFields
from platform_bus.ticket_setting import StepTicketSecretFields
from pydantic import Field, field_validator
from platform_contracts.log_lines import LogFormat
from platform_contracts.limits import MAX_ENTRY_GPUS
from pydantic_settings import BaseSettings, SettingsConfigDict

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def default_host_id() -> str:
    """A NATS-token-safe id from the hostname and pid, e.g. `my-laptop-4242` (no dots)."""
    host = _UNSAFE.sub("-", socket.gethostname().split(".")[0]).strip("-") or "envhost"
    return f"{host}-{os.getpid()}"


def _check_host_port(value: str) -> str:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"must be HOST:PORT, not {value!r}")
    return value


class Settings(BaseSettings, StepTicketSecretFields, SessionsStreamFields):
    """The env host's configuration; every field is `PLATFORM_<NAME>`."""

    model_config = SettingsConfigDict(env_prefix="PLATFORM_", extra="ignore")
    # How its log lines are written: text, or json (one JSON object per line; platform_contracts.log_lines).
    log_format: LogFormat = "text"

    nats_url: str = "nats://127.0.0.1:4222"
    envhost_id: str = Field(default_factory=default_host_id)
    # gRPC bind address of the step path; port 0 picks a free port.
    envhost_listen: str = "127.0.0.1:0"
    # The address given to others (broker, gateway); default: the bound host:port.
    envhost_advertise: str = ""
    # TCP bind address of the step link (the gateway's fast path); default: the host of
    # envhost_listen with port 0 (a free port).
    envhost_step_listen: str = ""
    # The step link's address given to others (in heartbeats); default: the bound host:port.
    envhost_step_advertise: str = ""
    # How instances run: "local" (processes of this host, or `docker run` of an image entry) or
    # "kubernetes" (a pod each: platform_envhost.pods, the PLATFORM_KUBE_* settings).
    launcher: Literal["local", "kubernetes"] = "local"
    envhost_capacity: int = Field(default=64, ge=1)
    # The most GPUs one instance may have here, offered in the heartbeat: the broker places an
    # entry with `gpus = N` only on a host offering N or more. Unset: none for local instances,
    # MAX_ENTRY_GPUS with Kubernetes (its scheduler finds the GPU node).
    envhost_gpus: int | None = Field(default=None, ge=0, le=MAX_ENTRY_GPUS)
    envhost_run_dir: Path = Path("./data/envhost")
    envhost_ready_timeout: float = Field(default=60.0, gt=0)
    envhost_heartbeat_interval: float = Field(default=2.0, gt=0)
    # Seconds without a round trip to NATS after which the host stops its sessions itself, before
    # the broker (10 s without a heartbeat) calls it dead: platform_envhost.bus_contact; 0: never.
    envhost_fence_after: float = Field(default=7.0, ge=0)
    # Step events kept in memory while waiting for JetStream; beyond it steps wait.
    envhost_publish_backlog: int = Field(default=10_000, ge=1)
    # jetstream_replicas, jetstream_max_bytes: from SessionsStreamFields
    # step_ticket_secret (or step_ticket_secret_file), from StepTicketSecretFields: shared with the
    # gateway; when set, every step link (and gRPC stream) must bring a ticket the gateway minted
    # for the session on this host (`platform_bus.step_tickets`); unset, none is asked for and the
    # gateway offers no direct path.

    @field_validator("envhost_id")
    @classmethod
    def _token_safe(cls, value: str) -> str:
        if not value or _UNSAFE.search(value):
            raise ValueError(f"must be letters, digits, '-' or '_' (one NATS subject token), not {value!r}")
        return value


    @field_validator("envhost_listen")
    @classmethod
    def _host_port(cls, value: str) -> str:
        return _check_host_port(value)

    @field_validator("envhost_step_listen")
    @classmethod
    def _step_host_port(cls, value: str) -> str:
        return value and _check_host_port(value)  # empty: derived from envhost_listen

    @property
    def step_listen(self) -> str:
        """The step link's bind address: `envhost_step_listen`, else the gRPC host with port 0."""
        return self.envhost_step_listen or f"{self.envhost_listen.rpartition(':')[0]}:0"

    @property
    def gpus_offered(self) -> int:
        """`envhost_gpus`, else what the launcher offers by default (see there)."""
        if self.envhost_gpus is not None:
            return self.envhost_gpus
        return MAX_ENTRY_GPUS if self.launcher == "kubernetes" else 0

    @property
    def host_run_dir(self) -> Path:
        """Sockets and instance logs of this host: `<run_dir>/<host id>/`."""
        return self.envhost_run_dir / self.envhost_id
