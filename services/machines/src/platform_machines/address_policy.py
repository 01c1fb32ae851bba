"""Which addresses the platform may dial: never one it must not be turned against, unless the
operator allows it (PLATFORM_MACHINES_ALLOW_NETWORKS).

Refused by default, every address that is not globally routable (Python's `is_global`) and every
multicast address: loopback (127.0.0.0/8, ::1: the platform's own services), link-local
(169.254.0.0/16 with the clouds' metadata address 169.254.169.254, fe80::/10), the private ranges
(10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7: where the platform's database, NATS and
cluster live), carrier-grade NAT (100.64.0.0/10), unspecified, reserved and documentation
ranges. An IPv4 address written as IPv6 (::ffff:127.0.0.1) is judged as the IPv4 address.
A host name is resolved and every address it resolves to is judged; the platform then dials the
address it judged (never resolving again), so a name cannot change its answer in between.
Only the first hop is dialled from the platform: bastions reach the hops after them.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass

from platform_machines.errors import InvalidMachineError

ALLOW_SETTING = "PLATFORM_MACHINES_ALLOW_NETWORKS"
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class RefusedAddressError(InvalidMachineError):
    """An address the platform must not dial; the message names it and the setting."""


def parse_networks(value: str) -> tuple[IPNetwork, ...]:
    """`127.0.0.0/8, 10.1.0.0/16` (commas or spaces) as networks.

    Raises:
        ValueError: a part that is not a CIDR; names it and the setting.
    """
    networks = []
    for part in value.replace(",", " ").split():
        try:
            networks.append(ipaddress.ip_network(part, strict=False))
        except ValueError:
            raise ValueError(f"{ALLOW_SETTING}: {part!r} is not a network such as 127.0.0.0/8 or fd00::/8") from None
    return tuple(networks)


@dataclass(frozen=True)
class AddressPolicy:
    """The allowed networks over the default refusal."""

    allowed: tuple[IPNetwork, ...] = ()

    def judge(self, address: IPAddress, host: str) -> None:
        """Raises RefusedAddressError unless the platform may dial `address` (which `host` named)."""
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        if any(address in network for network in self.allowed):
            return
        if address.is_global and not address.is_multicast:
            return
        named = str(address) if host == str(address) else f"{host} ({address})"
        raise RefusedAddressError(
            f"the platform does not connect to {named}: {_kind(address)} addresses are refused so that it cannot be "
            f"turned against itself or its network; an operator may allow a network with {ALLOW_SETTING} "
            "(CIDRs, e.g. 192.168.1.0/24)", field="ssh")

    async def resolve(self, host: str, port: int) -> IPAddress:
        """The address to dial for `host`: every address it resolves to is judged, the first is used.

        Raises:
            RefusedAddressError: one of its addresses is refused.
            InvalidMachineError: the name does not resolve.
        """
        addresses = await _addresses(host, port)
        for address in addresses:
            self.judge(address, host)
        return addresses[0]


async def _addresses(host: str, port: int) -> list[IPAddress]:
    try:
        return [ipaddress.ip_address(host.split("%")[0])]
    except ValueError:
        pass
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise InvalidMachineError(f"the host name {host!r} does not resolve: {exc.strerror}", field="ssh") from None
    return _unique(ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos)


def _unique(addresses: Iterable[IPAddress]) -> list[IPAddress]:
    seen: list[IPAddress] = []
    for address in addresses:
        if address not in seen:
            seen.append(address)
    return seen


def _kind(address: IPAddress) -> str:
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local (cloud metadata)"
    if address.is_multicast:
        return "multicast"
    if address.is_private:
        return "private"
    return "non-public"
