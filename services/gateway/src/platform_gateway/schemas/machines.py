"""The users' GPU machines over SSH (docs/gpu-machines.md), kept by the machines service."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

MachineStatus = Literal["ready", "unreachable", "host key changed", "unchecked"]


class SshKeyPublic(BaseModel):
    """The platform's SSH key: add `authorized_keys_line` to `~/.ssh/authorized_keys` on a machine."""

    public_key: str = Field(description='the public half, e.g. "ssh-ed25519 AAAA... simulusion-platform"')
    fingerprint: str = Field(description='"SHA256:..."')
    authorized_keys_line: str = Field(description="the line to add to ~/.ssh/authorized_keys of the machine's user")


class MachineCreate(BaseModel):
    """A machine to add: the SSH command your provider shows, pasted as it is."""

    ssh: str = Field(min_length=1, max_length=4096, examples=["ssh root@203.0.113.7 -p 22045 -i ~/.ssh/id_ed25519"],
                     description="the provider's SSH command (`ssh ...` or `ssh://user@host:port`); `-i` and "
                                 "forwardings are ignored, the platform always uses its own key")
    name: str = Field("", max_length=200, description="a name for the machine (default: its host)")


class MachineBehindNatCreate(BaseModel):
    """A machine without a public address (a laptop, WSL, a box behind NAT): it opens a reverse tunnel to the
    platform by running the command the reply gives."""

    name: str = Field(min_length=1, max_length=200, examples=["my-laptop"])
    user: str = Field(min_length=1, max_length=32, pattern=r"^[A-Za-z_][A-Za-z0-9_.-]*$", examples=["ubuntu"],
                      description="the user on the machine who runs the command; the platform logs in as them")
    ssh_port: int = Field(22, ge=1, le=65535, description="the port of the machine's own sshd (on its loopback)")


class TunnelPublic(BaseModel):
    """A machine behind NAT's reverse tunnel to the platform."""

    state: Literal["waiting", "connected", "down"] = Field(
        description="waiting: the machine never connected yet; connected; down: the tunnel dropped")
    since: float = Field(description="Unix seconds when that state began")
    summary: str = Field(description='"waiting for the machine to connect", "connected since ...", '
                                     '"tunnel down since ..."')


class SshHopPublic(BaseModel):
    user: str
    host: str
    port: int


class GpuPublic(BaseModel):
    index: int
    name: str
    memory_total_mib: int | None = Field(None, description="null when nvidia-smi reports N/A")
    uuid: str
    driver_version: str


class GpuProcessPublic(BaseModel):
    gpu_uuid: str
    pid: int
    used_memory_mib: int | None = None


class MachineFactsPublic(BaseModel):
    """What the last successful check found."""

    gpus: list[GpuPublic] = Field(default_factory=list, description="empty: a CPU machine (no nvidia-smi)")
    gpu_processes: list[GpuProcessPublic] = Field(default_factory=list, description="processes already on the GPUs")
    gpu_error: str = Field("", description="nvidia-smi is there but failed: its message")
    cpus: int = 0
    memory_total_bytes: int = 0
    memory_available_bytes: int = 0
    disk_total_bytes: int = Field(0, description="of the file system of the user's home folder")
    disk_free_bytes: int = 0
    python: str = Field("", description="`python3 --version`; empty when missing")
    git: str = Field("", description="`git --version`; empty when missing")
    os: str = ""


class MachinePublic(BaseModel):
    id: str
    name: str
    team: str
    target: SshHopPublic = Field(description="where the platform logs in")
    jumps: list[SshHopPublic] = Field(default_factory=list, description="bastions on the way (ssh -J), in order")
    status: MachineStatus
    status_reason: str = Field("", description="why it is unreachable, or what to do about a changed host key")
    host_key_fingerprints: dict[str, str] = Field(default_factory=dict,
                                                  description='each hop\'s pinned host key, by "host:port"')
    pending_host_key_fingerprints: dict[str, str] = Field(
        default_factory=dict, description="the keys hops presented instead of their pinned ones, waiting to be "
                                          "accepted (POST /v0/machines/{id}/accept-host-key)")
    facts: MachineFactsPublic
    created_at: float
    checked_at: float = Field(description="Unix seconds of the last check, 0 when never")
    facts_at: float = Field(description="Unix seconds of the last successful check, 0 when never")
    tunnel: TunnelPublic | None = Field(None, description="a machine behind NAT: its tunnel; null for a machine the "
                                                          "platform dials directly")


class MachinesPublic(BaseModel):
    machines: list[MachinePublic]


class MachineBehindNatCreated(BaseModel):
    machine: MachinePublic
    command: str = Field(description="run this once on the machine, as `user`, and leave it running: it writes the "
                                     "machine's tunnel key and the platform's host key under ~/.ssh, authorizes the "
                                     "platform's key, and keeps the tunnel open. It holds the tunnel key's private "
                                     "half: shown only here, never again")
