"""A machine behind NAT for tests: a network namespace joined to the platform's side by a veth
pair on a /30 the test picks, with no route to anything but the platform's veth address (and
the namespace's own loopback). Needs root; the namespace, the veth pair and every process started
in it are removed on exit, also when the test fails.

    with NatNamespace() as ns:
        ns.platform_address  # listen here on the platform's side
        process = ns.popen(["ssh", ...])  # dials out from inside
        ns.cut(); ns.restore()  # the link down and up again (end="machine": the far end)
"""

from __future__ import annotations

import os
import secrets
import subprocess
from collections.abc import Iterator, Sequence
from typing import Any, Self

import pytest


class NatNamespace:
    """`name` (the namespace), `platform_address` and `machine_address` (the veth ends)."""

    def __init__(self) -> None:
        tag = secrets.token_hex(3)
        self.name = f"simnat-{tag}"
        self.veth = f"snp{tag}"  # the platform's end
        self._peer = f"snm{tag}"  # the machine's end, moved into the namespace
        subnet = secrets.randbelow(250) + 2
        self.platform_address = f"10.231.{subnet}.1"
        self.machine_address = f"10.231.{subnet}.2"
        self._processes: list[subprocess.Popen[Any]] = []

    def start(self) -> Self:
        if os.geteuid() != 0:
            raise PermissionError("a network namespace needs root")
        try:
            for command in (
                ["ip", "netns", "add", self.name],
                ["ip", "link", "add", self.veth, "type", "veth", "peer", "name", self._peer],
                ["ip", "link", "set", self._peer, "netns", self.name],
                ["ip", "addr", "add", f"{self.platform_address}/30", "dev", self.veth],
                ["ip", "link", "set", self.veth, "up"],
                ["ip", "netns", "exec", self.name, "ip", "addr", "add", f"{self.machine_address}/30", "dev", self._peer],
                ["ip", "netns", "exec", self.name, "ip", "link", "set", self._peer, "up"],
                ["ip", "netns", "exec", self.name, "ip", "link", "set", "lo", "up"],
            ):
                subprocess.run(command, check=True, capture_output=True, timeout=30)
        except BaseException:
            self.stop()
            raise
        return self

    def popen(self, argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[Any]:
        """A process inside the namespace, ended on exit."""
        process = subprocess.Popen(["ip", "netns", "exec", self.name, *argv], start_new_session=True, **kwargs)
        self._processes.append(process)
        return process

    def cut(self, end: str = "platform") -> None:
        """The link goes down (the machine's connection to the platform is gone, nothing says so).

        `end="machine"` sets the machine's end down inside the namespace instead: the platform's
        end stays up without a carrier and keeps its route, so what the platform sends is
        dropped silently (a cable pulled far away) and nothing goes out by another route."""
        subprocess.run(self._link(end, "down"), check=True, capture_output=True, timeout=30)

    def restore(self, end: str = "platform") -> None:
        subprocess.run(self._link(end, "up"), check=True, capture_output=True, timeout=30)

    def _link(self, end: str, state: str) -> list[str]:
        if end == "platform":
            return ["ip", "link", "set", self.veth, state]
        if end == "machine":
            return ["ip", "netns", "exec", self.name, "ip", "link", "set", self._peer, state]
        raise ValueError(f"end is 'platform' or 'machine', not {end!r}")

    def stop(self) -> None:
        for process in self._processes:
            if process.poll() is None:
                os.killpg(process.pid, 15)
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, 9)
                    process.wait()
        self._processes.clear()
        subprocess.run(["ip", "link", "del", self.veth], capture_output=True, timeout=30)  # the peer goes with it
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True, timeout=30)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@pytest.fixture
def nat_namespace() -> Iterator[NatNamespace]:
    with NatNamespace() as namespace:
        yield namespace
