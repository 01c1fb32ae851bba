"""A real OpenSSH server for tests: Debian's `/usr/sbin/sshd -D -f <its own config>` on a free
loopback port, as the current user, with its own host key, its own `authorized_keys` and a fake
`nvidia-smi` first on the sessions' PATH describing two GPUs (and one process on the first).

    with SshServer(tmp_path) as sshd:
        sshd.authorize(public_key_line)
        ... ssh -p {sshd.port} {sshd.user}@127.0.0.1 ...
        sshd.change_host_key()  # a reinstalled machine: the next connection sees another key

In a network namespace (a machine behind NAT, platform_testing.netns) it listens on the
namespace's own loopback: `SshServer(root, netns="...")`, started with `ip netns exec`; with
`host=` (the namespace's veth address) on that address too, so the platform can dial it.

Fixture (load this module as a pytest plugin): `sshd`, one server per test.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Self

import pytest

from platform_testing.ports import free_port

SSHD = Path("/usr/sbin/sshd")
SSH_KEYGEN = "ssh-keygen"
FAKE_GPUS = (
    "0, NVIDIA H100 80GB HBM3, 81559, GPU-11111111-2222-3333-4444-555555555555, 550.54.15",
    "1, NVIDIA H100 80GB HBM3, [N/A], GPU-66666666-7777-8888-9999-000000000000, 550.54.15",
)
FAKE_GPU_PROCESSES = ("GPU-11111111-2222-3333-4444-555555555555, 4242, 1024",)

_FAKE_NVIDIA_SMI = """#!/bin/sh
# A stand-in for nvidia-smi with two GPUs (platform_testing.sshd).
case "$*" in
  *--query-gpu=*) printf '%s\\n' {gpus} ;;
  *--query-compute-apps=*) printf '%s\\n' {processes} ;;
  *) echo "fake nvidia-smi: two GPUs" ;;
esac
"""


class SshdMissingError(RuntimeError):
    pass


class SshServer:
    """One sshd under `root` (config, host key, authorized_keys, the fake `bin/`)."""

    def __init__(self, root: Path, gpus: bool = True, netns: str | None = None,
                 authorized_keys: Path | None = None, host: str = "127.0.0.1") -> None:
        if not SSHD.exists() or shutil.which(SSH_KEYGEN) is None:
            raise SshdMissingError(
                f"{SSHD} or ssh-keygen is missing: install Debian's openssh-server and openssh-client "
                "(scripts/install_system_deps.sh as root does)")
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.host = host  # where it listens (and the loopback of its namespace too)
        self.netns = netns
        self.port = 22 if netns else free_port()  # a namespace's loopback is its own
        self.user = getpass.getuser()
        self.host_key = self.root / "ssh_host_ed25519_key"
        self.authorized_keys = authorized_keys or self.root / "authorized_keys"
        self.authorized_keys.parent.mkdir(parents=True, exist_ok=True)
        self.authorized_keys.touch()
        self.bin = self.root / "bin"
        self.home = self.root / "home"  # the sessions' HOME (SetEnv): experiments' run folders land here
        self.home.mkdir(exist_ok=True)
        self.bin.mkdir(exist_ok=True)
        if gpus:
            self._write_fake_nvidia_smi()
        self.config = self.root / "sshd_config"
        self._process: subprocess.Popen[bytes] | None = None
        self._make_host_key()

    @property
    def ssh_command(self) -> str:
        """What a provider would show for this server."""
        return f"ssh {self.user}@{self.host} -p {self.port}"

    def authorize(self, public_key_line: str) -> None:
        with self.authorized_keys.open("a") as out:
            out.write(public_key_line.strip() + "\n")

    def host_public_key(self) -> str:
        """The host key's public half as `type base64` (no comment)."""
        return " ".join(self.host_key.with_name(self.host_key.name + ".pub").read_text().split()[:2])

    def start(self) -> Self:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation folder, as root
        self.config.write_text("\n".join([
            f"ListenAddress {self.host}:{self.port}",
            *([f"ListenAddress 127.0.0.1:{self.port}"] if self.netns and self.host != "127.0.0.1" else []),
            f"HostKey {self.host_key}",
            f"PidFile {self.root / 'sshd.pid'}",
            f"AuthorizedKeysFile {self.authorized_keys}",
            "StrictModes no",
            "UsePAM no",
            "PubkeyAuthentication yes",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "PermitRootLogin prohibit-password",
            "AllowTcpForwarding yes",
            f"SetEnv PATH={self.bin}:/usr/local/bin:/usr/bin:/bin HOME={self.home}",
            "LogLevel VERBOSE",
            "",
        ]))
        log = (self.root / "sshd.log").open("ab")
        prefix = ["ip", "netns", "exec", self.netns] if self.netns else []
        self._process = subprocess.Popen([*prefix, str(SSHD), "-D", "-e", "-f", str(self.config)], stdout=log,
                                         stderr=log)
        if self.netns:
            return self._wait_listening()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"sshd exited at start ({self._process.returncode}): {self.log_tail()}")
            try:
                with socket.create_connection((self.host, self.port), timeout=0.5) as sock:
                    if sock.recv(4).startswith(b"SSH-"):
                        return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"sshd did not answer on {self.host}:{self.port} in 10 s: {self.log_tail()}")

    def _wait_listening(self) -> Self:
        """In a namespace the platform's side cannot connect: sshd's own log says when it listens."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self._process is not None and self._process.poll() is not None:
                raise RuntimeError(f"sshd exited at start ({self._process.returncode}): {self.log_tail()}")
            if "Server listening on" in self.log_tail(50):
                return self
            time.sleep(0.05)
        raise RuntimeError(f"sshd did not listen in {self.netns} in 10 s: {self.log_tail()}")

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._process = None

    def drop_connections(self) -> int:
        """Kill (KILL) the sshd process of every open connection; the listener stays, so clients
        see their connections closed and may connect again, and what the sessions started
        detached (setsid, as experiments are) runs on. Returns how many were killed."""
        if self._process is None:
            return 0
        children = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rpartition(")")[2].split()
            except OSError:
                continue
            if int(fields[1]) == self._process.pid:
                children.append(int(stat.parent.name))
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return len(children)

    def change_host_key(self) -> None:
        """A new host key, as after a reinstall: the server is started again with it."""
        running = self._process is not None
        self.stop()
        self._make_host_key()
        if running:
            self.start()

    def log_tail(self, lines: int = 20) -> str:
        path = self.root / "sshd.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""

    def _make_host_key(self) -> None:
        for path in (self.host_key, self.host_key.with_name(self.host_key.name + ".pub")):
            path.unlink(missing_ok=True)
        subprocess.run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", "test-sshd", "-f", str(self.host_key)],
                       check=True, capture_output=True, timeout=30)

    def _write_fake_nvidia_smi(self) -> None:
        quoted = " ".join(f"'{line}'" for line in FAKE_GPUS)
        processes = " ".join(f"'{line}'" for line in FAKE_GPU_PROCESSES)
        path = self.bin / "nvidia-smi"
        path.write_text(_FAKE_NVIDIA_SMI.format(gpus=quoted, processes=processes))
        os.chmod(path, 0o755)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@pytest.fixture
def sshd(tmp_path: Path) -> Iterator[SshServer]:
    """A running sshd with the fake two-GPU nvidia-smi; fails naming openssh-server when missing."""
    try:
        server = SshServer(tmp_path / "sshd")
    except SshdMissingError as exc:
        pytest.fail(str(exc))
    with server:
        yield server
