"""Settings of the machines service (environment variables, prefix `PLATFORM_`)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from platform_contracts.log_lines import LogFormat
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_SSH_KEY = Path("~/.config/simulusion-platform/ssh/id_ed25519")


class Settings(BaseSettings):
    """Attributes:
        nats_url: the NATS servers (comma-separated).
        database_url: the platform's SQL database, where the `machines` table lives.
        ssh_key: the platform's SSH key (PLATFORM_SSH_KEY), made on first use.
        machines_allow_networks: CIDRs the platform may dial although they are not public
            (PLATFORM_MACHINES_ALLOW_NETWORKS, e.g. `192.168.1.0/24`; see address_policy).
        machines_connect_timeout: seconds one SSH hop may take to connect and log in.
        machines_keepalive: seconds between keepalives on the platform's SSH connections to
            machines; three unanswered and the connection counts as dead (an experiment's
            follower dials again) (PLATFORM_MACHINES_KEEPALIVE).
        tunnel_port: the port of the platform's own SSH endpoint that machines behind NAT open
            their reverse tunnel to (PLATFORM_TUNNEL_PORT); 0, the default: no endpoint.
        tunnel_listen: the address that endpoint listens on (PLATFORM_TUNNEL_LISTEN).
        tunnel_address: the host name or address machines dial to reach it, written into their
            command (PLATFORM_TUNNEL_ADDRESS; default: the listen address, or this host's name
            when that is a wildcard).
        tunnel_keepalive: seconds between keepalives on a tunnel, both ways; three missed ones
            and the tunnel counts as down (PLATFORM_TUNNEL_KEEPALIVE).
        public_url: the platform's address as the machines reach it (PLATFORM_PUBLIC_URL, e.g.
            `https://platform.example.com`): experiments get it as PLATFORM_URL. Unset: each
            experiment's SSH connection forwards a port on the machine's loopback to
            `experiments_gateway`, and PLATFORM_URL is `http://127.0.0.1:<that port>`.
        experiments_gateway: `host:port` of the platform's HTTP API as this service reaches it
            (the launcher sets it to its gateway's): where the forwarded port leads.
        experiments_poll_interval: seconds between two reads of a running experiment's log.
        experiments_lost_after: seconds a running experiment's machine may stay unreachable
            before the experiment is `lost`.
        experiments_cancel_grace: seconds between TERM and KILL on cancel.
        experiments_fail_fast: seconds the start waits for a command that fails at once.
        experiments_upload_roots: folders of the platform's host (colon-separated) under which an
            experiment's `folder` may be uploaded to its machine; empty, the default: none
            (PLATFORM_EXPERIMENTS_UPLOAD_ROOTS).
        experiments_upload_max_mb: the most an uploaded folder may hold, in MB (its files,
            uncompressed) (PLATFORM_EXPERIMENTS_UPLOAD_MAX_MB).
    """

    model_config = SettingsConfigDict(env_prefix="PLATFORM_", extra="ignore")
    # How its log lines are written: text, or json (one JSON object per line; platform_contracts.log_lines).
    log_format: LogFormat = "text"

    nats_url: str = "nats://127.0.0.1:4222"
    database_url: str = "sqlite+aiosqlite:///./data/platform.db"
    ssh_key: Path = DEFAULT_SSH_KEY
    machines_allow_networks: str = ""
    machines_connect_timeout: float = Field(15.0, gt=0)
    machines_keepalive: float = Field(15.0, gt=0)
    tunnel_port: int = Field(0, ge=0, le=65535)
    tunnel_listen: str = "0.0.0.0"
    tunnel_address: str = ""
    tunnel_keepalive: float = Field(15.0, gt=0)
    public_url: str = ""
    experiments_gateway: str = "127.0.0.1:8000"
    experiments_poll_interval: float = Field(0.5, gt=0)
    experiments_lost_after: float = Field(600.0, gt=0)
    experiments_cancel_grace: float = Field(5.0, ge=0)
    experiments_fail_fast: float = Field(1.0, ge=0)
    experiments_upload_roots: str = ""
    experiments_upload_max_mb: float = Field(500.0, gt=0)

    @property
    def nats_servers(self) -> list[str]:
        return [url.strip() for url in self.nats_url.split(",") if url.strip()]
