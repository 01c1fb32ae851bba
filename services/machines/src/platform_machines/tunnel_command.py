"""The one command a machine behind NAT runs (docs/gpu-machines.md, "Machines behind NAT").

It is a single line for a POSIX shell (bash, zsh, sh; Linux, WSL, macOS), run as the user the
platform logs in as. It writes, under `$HOME/.ssh` with mode 0600, the machine's tunnel key (the
private half; the platform keeps only the public one) and a known_hosts file holding the tunnel
endpoint's host key, adds the platform's key to `authorized_keys` when missing, then opens the
reverse tunnel with the OpenSSH client in a loop: `ssh -N -R 127.0.0.1:<port>:localhost:<sshd>`
with keepalives (`ServerAliveInterval`), `ExitOnForwardFailure`, strict host key checking and
batch mode (never a prompt), started again 5 s after it ends, whatever ended it.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

RETRY_DELAY_S = 5
KEEPALIVE_COUNT = 3


@dataclass(frozen=True)
class TunnelCommandParts:
    """What the command needs: the machine (`machine_id` is the tunnel's SSH user), the
    endpoint it dials, the loopback port assigned to it, and the keys."""

    machine_id: str
    endpoint_host: str
    endpoint_port: int
    endpoint_host_key: str  # the endpoint's public host key, "ssh-ed25519 AAAA..."
    forward_port: int  # on the platform's loopback
    machine_ssh_port: int  # the machine's own sshd, on its loopback
    tunnel_private_key: str  # OpenSSH private key text
    platform_key_line: str  # the platform's authorized_keys line
    keepalive_s: float


def known_hosts_line(host: str, port: int, host_key: str) -> str:
    """`host key` or `[host]:port key` as OpenSSH's known_hosts writes it."""
    name = host if port == 22 else f"[{host}]:{port}"
    return f"{name} {' '.join(host_key.split()[:2])}"


def tunnel_command(parts: TunnelCommandParts) -> str:
    """The command line (holds the private tunnel key: shown once, never logged)."""
    key_file = f'"$HOME/.ssh/simulusion-tunnel-{parts.machine_id}"'
    hosts_file = f'"$HOME/.ssh/simulusion-tunnel-{parts.machine_id}.known_hosts"'
    authorized = '"$HOME/.ssh/authorized_keys"'
    key_lines = " ".join(shlex.quote(line) for line in parts.tunnel_private_key.strip().splitlines())
    host_line = shlex.quote(known_hosts_line(parts.endpoint_host, parts.endpoint_port, parts.endpoint_host_key))
    platform_line = shlex.quote(parts.platform_key_line)
    keepalive = max(1, round(parts.keepalive_s))
    ssh = " ".join([
        "ssh -N", f"-i {key_file}", "-o IdentitiesOnly=yes", f"-o UserKnownHostsFile={hosts_file}",
        "-o StrictHostKeyChecking=yes", "-o BatchMode=yes", "-o ExitOnForwardFailure=yes",
        f"-o ServerAliveInterval={keepalive}", f"-o ServerAliveCountMax={KEEPALIVE_COUNT}",
        f"-o ConnectTimeout={max(10, keepalive * KEEPALIVE_COUNT)}",
        f"-R 127.0.0.1:{parts.forward_port}:localhost:{parts.machine_ssh_port}",
        f"-p {parts.endpoint_port}", shlex.quote(f"{parts.machine_id}@{parts.endpoint_host}"),
    ])
    return " && ".join([
        'mkdir -p "$HOME/.ssh"', 'chmod 700 "$HOME/.ssh"',
        f"(umask 077; printf '%s\\n' {key_lines} > {key_file}; printf '%s\\n' {host_line} > {hosts_file})",
        f"(grep -qxF {platform_line} {authorized} 2>/dev/null || printf '%s\\n' {platform_line} >> {authorized})",
        f"chmod 600 {authorized}",
        f"while true; do {ssh}; sleep {RETRY_DELAY_S}; done",
    ])
