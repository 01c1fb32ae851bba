"""Machines for one test: network namespaces joined by a bridge in the root namespace, each with
its own address on a /24 of 10.77.0.0/16 picked for the test (the bridge holds `.1`, so the test
and the root namespace's servers reach every machine and are reached at `gateway_address`).

Names carry a random tag, so tests in parallel (pytest-xdist) never share one; the subnet is
claimed under a file lock against the addresses already on this host's interfaces. Needs root.
Everything made (namespaces, veth pairs, the bridge) is removed by `stop`, also after a failure.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import subprocess
from dataclasses import dataclass
from typing import Self

LOCK_PATH = "/tmp/simulusion-cluster-subnets.lock"
FIRST_HOST = 10  # machines get .10, .11, ...


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


@dataclass
class Machine:
    """One namespace: `name`, `address` (on the bridge), `veth` (its link's root-side end)."""

    name: str
    address: str
    veth: str

    def argv(self, command: list[str]) -> list[str]:
        """`command` run inside this machine (`ip netns exec` execs it: the pid is the command's)."""
        return ["ip", "netns", "exec", self.name, *command]


class ClusterNetwork:
    def __init__(self) -> None:
        self.tag = secrets.token_hex(3)
        self.bridge = f"scb{self.tag}"
        self.subnet = ""
        self.machines: dict[str, Machine] = {}

    @property
    def gateway_address(self) -> str:
        """The bridge's address: the root namespace as the machines see it."""
        return f"{self.subnet}.1"

    def start(self) -> Self:
        if os.geteuid() != 0:
            raise PermissionError("the cluster tests make network namespaces: they need root")
        with open(LOCK_PATH, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            used = subprocess.run(["ip", "-o", "-4", "addr"], check=True, capture_output=True, text=True).stdout
            free = [n for n in range(1, 255) if f" 10.77.{n}." not in used]
            if not free:
                raise RuntimeError("no free /24 left in 10.77.0.0/16 for the cluster's bridge")
            self.subnet = f"10.77.{free[secrets.randbelow(len(free))]}"
            try:
                _ip("link", "add", self.bridge, "type", "bridge")
                _ip("addr", "add", f"{self.gateway_address}/24", "dev", self.bridge)
                _ip("link", "set", self.bridge, "up")
            except BaseException:
                self.stop()
                raise
        return self

    def add(self, role: str) -> Machine:
        """A new machine named after `role` (letters and digits, a few of them)."""
        index = len(self.machines)
        machine = Machine(f"sc{self.tag}-{role}", f"{self.subnet}.{FIRST_HOST + index}", f"scv{self.tag}{index}")
        self.machines[role] = machine
        peer = f"scp{self.tag}{index}"
        _ip("netns", "add", machine.name)
        _ip("link", "add", machine.veth, "type", "veth", "peer", "name", peer)
        _ip("link", "set", machine.veth, "master", self.bridge)
        _ip("link", "set", machine.veth, "up")
        _ip("link", "set", peer, "netns", machine.name)
        _ip("-n", machine.name, "addr", "add", f"{machine.address}/24", "dev", peer)
        _ip("-n", machine.name, "link", "set", peer, "up")
        _ip("-n", machine.name, "link", "set", "lo", "up")
        _ip("-n", machine.name, "route", "add", "default", "via", self.gateway_address)
        return machine

    def cut(self, role: str) -> None:
        """The machine's link goes down on the bridge's side: nothing reaches it, nothing says so."""
        _ip("link", "set", self.machines[role].veth, "down")

    def restore(self, role: str) -> None:
        _ip("link", "set", self.machines[role].veth, "up")

    def stop(self) -> None:
        for machine in self.machines.values():
            subprocess.run(["ip", "link", "del", machine.veth], capture_output=True, timeout=30)
            subprocess.run(["ip", "netns", "del", machine.name], capture_output=True, timeout=30)
        self.machines.clear()
        subprocess.run(["ip", "link", "del", self.bridge], capture_output=True, timeout=30)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
