"""Settings of the machines service (environment variables, prefix `PLATFORM_`)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
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
        tunnel_port: the port of the platform's own SSH endpoint that machines behind NAT open
            their reverse tunnel to (PLATFORM_TUNNEL_PORT); 0, the default: no endpoint.
        tunnel_listen: the address that endpoint listens on (PLATFORM_TUNNEL_LISTEN).
        tunnel_address: the host name or address machines dial to reach it, written into their
            command (PLATFORM_TUNNEL_ADDRESS; default: the listen address, or this host's name
            when that is a wildcard).
        tunnel_keepalive: seconds between keepalives on a tunnel, both ways; three missed ones
            and the tunnel counts as down (PLATFORM_TUNNEL_KEEPALIVE).
    """

    model_config = SettingsConfigDict(env_prefix="PLATFORM_", extra="ignore")

    nats_url: str = "nats://127.0.0.1:4222"
    database_url: str = "sqlite+aiosqlite:///./data/platform.db"
    ssh_key: Path = DEFAULT_SSH_KEY
    machines_allow_networks: str = ""
    machines_connect_timeout: float = Field(15.0, gt=0)
    tunnel_port: int = Field(0, ge=0, le=65535)
    tunnel_listen: str = "0.0.0.0"
    tunnel_address: str = ""
    tunnel_keepalive: float = Field(15.0, gt=0)

    @property
    def nats_servers(self) -> list[str]:
        return [url.strip() for url in self.nats_url.split(",") if url.strip()]
