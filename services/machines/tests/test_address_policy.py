"""Addresses the platform must never be turned against, and the operator's allow-list."""

from __future__ import annotations

import ipaddress

import pytest
from platform_machines.address_policy import ALLOW_SETTING, AddressPolicy, RefusedAddressError, parse_networks


@pytest.mark.parametrize("address", [
    "169.254.169.254", "169.254.1.1", "127.0.0.1", "127.8.9.10", "::1", "fe80::1", "10.0.0.5", "172.16.3.4",
    "192.168.1.10", "fd00:ec2::254", "100.64.0.1", "0.0.0.0", "224.0.0.1", "::ffff:127.0.0.1",
    "::ffff:169.254.169.254",
])
async def test_refused_by_default_naming_the_address_and_the_setting(address: str) -> None:
    with pytest.raises(RefusedAddressError) as caught:
        await AddressPolicy().resolve(address, 22)
    parsed = ipaddress.ip_address(address)
    mapped = parsed.ipv4_mapped if isinstance(parsed, ipaddress.IPv6Address) else None
    shown = str(mapped or parsed)  # an IPv4 address written as IPv6 is judged (and named) as IPv4
    assert shown in str(caught.value) and ALLOW_SETTING in str(caught.value)


@pytest.mark.parametrize("address", ["1.1.1.1", "8.8.8.8", "2606:4700:4700::1111"])
async def test_public_addresses_pass(address: str) -> None:
    assert str(await AddressPolicy().resolve(address, 22)) in (address, str(ipaddress.ip_address(address)))


async def test_a_name_is_judged_by_what_it_resolves_to() -> None:
    with pytest.raises(RefusedAddressError, match=r"localhost \((127\.0\.0\.1|::1)\)"):
        await AddressPolicy().resolve("localhost", 22)


async def test_the_operator_allows_networks() -> None:
    policy = AddressPolicy(parse_networks("127.0.0.0/8, ::1/128 192.168.1.0/24"))
    assert str(await policy.resolve("127.0.0.1", 22)) == "127.0.0.1"
    assert str(await policy.resolve("192.168.1.10", 22)) == "192.168.1.10"
    with pytest.raises(RefusedAddressError, match="169.254.169.254"):
        await policy.resolve("169.254.169.254", 80)  # metadata stays refused


def test_a_bad_network_names_the_setting() -> None:
    with pytest.raises(ValueError, match=f"{ALLOW_SETTING}: 'ten' is not a network"):
        parse_networks("10.0.0.0/8,ten")
