"""The tunnel endpoint and machines behind NAT from the settings (PLATFORM_TUNNEL_*): the
endpoint's host key is the platform's own, kept beside PLATFORM_SSH_KEY (`tunnel_host_ed25519_key`)
and made on first use, so that the command machines run pins it rather than trusting blindly."""

from __future__ import annotations

from dataclasses import dataclass

from platform_machines.config import Settings
from platform_machines.machine_registry import MachineRegistry
from platform_machines.platform_key import PlatformKey, load_or_create_key
from platform_machines.tunnel_endpoint import TunnelEndpoint
from platform_machines.tunnel_machines import MachinesBehindNat, TunnelEndpointAddress, endpoint_host

HOST_KEY_NAME = "tunnel_host_ed25519_key"


@dataclass(frozen=True)
class TunnelSettings:
    listen: str
    port: int
    address: str
    keepalive: float
    host_key: PlatformKey


def tunnel_settings(settings: Settings) -> TunnelSettings | None:
    """None when PLATFORM_TUNNEL_PORT is 0 (no endpoint). Raises PlatformKeyError (the host key)."""
    if not settings.tunnel_port:
        return None
    host_key = load_or_create_key(settings.ssh_key.expanduser().with_name(HOST_KEY_NAME))
    return TunnelSettings(settings.tunnel_listen, settings.tunnel_port,
                          endpoint_host(settings.tunnel_listen, settings.tunnel_address), settings.tunnel_keepalive,
                          host_key)


def open_tunnels(registry: MachineRegistry, key: PlatformKey,
                 tunnels: TunnelSettings | None) -> tuple[MachinesBehindNat, TunnelEndpoint | None]:
    if tunnels is None:
        return MachinesBehindNat(registry, key, None), None
    address = TunnelEndpointAddress(tunnels.address, tunnels.port, tunnels.host_key, tunnels.keepalive)
    behind_nat = MachinesBehindNat(registry, key, address)
    endpoint = TunnelEndpoint(registry.store, tunnels.host_key, tunnels.listen, tunnels.port, tunnels.keepalive,
                              on_up=behind_nat.tunnel_up, on_down=behind_nat.tunnel_down)
    return behind_nat, endpoint
