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
    """

    model_config = SettingsConfigDict(env_prefix="PLATFORM_", extra="ignore")

    nats_url: str = "nats://127.0.0.1:4222"
    database_url: str = "sqlite+aiosqlite:///./data/platform.db"
    ssh_key: Path = DEFAULT_SSH_KEY
    machines_allow_networks: str = ""
    machines_connect_timeout: float = Field(15.0, gt=0)

    @property
    def nats_servers(self) -> list[str]:
        return [url.strip() for url in self.nats_url.split(",") if url.strip()]
