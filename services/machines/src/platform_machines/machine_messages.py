"""Stored machines as messages of simulusion.machines.v1 (what the replies carry)."""

from __future__ import annotations

from typing import Any

from simulusion.machines.v1 import machines_pb2 as pb

from platform_machines.machine_store import StoredMachine
from platform_machines.ssh_command import SshHop
from platform_machines.ssh_connections import fingerprint
from platform_machines.tunnel_state import tunnel_summary


def hop_message(hop: SshHop) -> pb.SshHop:
    return pb.SshHop(user=hop.user, host=hop.host, port=hop.port)


def facts_message(facts: dict[str, Any]) -> pb.MachineFacts:
    message = pb.MachineFacts(
        gpu_error=str(facts.get("gpu_error", "")), cpus=int(facts.get("cpus", 0)),
        memory_total_bytes=int(facts.get("memory_total_bytes", 0)),
        memory_available_bytes=int(facts.get("memory_available_bytes", 0)),
        disk_total_bytes=int(facts.get("disk_total_bytes", 0)), disk_free_bytes=int(facts.get("disk_free_bytes", 0)),
        python=str(facts.get("python", "")), git=str(facts.get("git", "")), os=str(facts.get("os", "")),
        docker=str(facts.get("docker", "")))
    for gpu in facts.get("gpus", []):
        entry = message.gpus.add(index=int(gpu["index"]), name=str(gpu["name"]), uuid=str(gpu["uuid"]),
                                 driver_version=str(gpu["driver_version"]))
        if gpu.get("memory_total_mib") is not None:
            entry.memory_total_mib = int(gpu["memory_total_mib"])
    for process in facts.get("gpu_processes", []):
        found = message.gpu_processes.add(gpu_uuid=str(process["gpu_uuid"]), pid=int(process["pid"]))
        if process.get("used_memory_mib") is not None:
            found.used_memory_mib = int(process["used_memory_mib"])
    return message


def machine_message(machine: StoredMachine) -> pb.Machine:
    message = _machine_message(machine)
    if machine.target.tunnel:
        message.tunnel.CopyFrom(pb.MachineTunnel(state=machine.tunnel_state, since=machine.tunnel_since,
                                                 summary=tunnel_summary(machine.tunnel_state, machine.tunnel_since)))
    return message


def _machine_message(machine: StoredMachine) -> pb.Machine:
    return pb.Machine(
        id=machine.id, name=machine.name, team=machine.team, target=hop_message(machine.target.machine),
        jumps=[hop_message(j) for j in machine.target.jumps], status=machine.status,
        status_reason=machine.status_reason,
        host_key_fingerprints={hop: fingerprint(key) for hop, key in machine.host_keys.items()},
        pending_host_key_fingerprints={hop: fingerprint(key) or "unreadable"
                                       for hop, key in machine.pending_host_keys.items()},
        facts=facts_message(machine.facts), created_at=machine.created_at, checked_at=machine.checked_at,
        facts_at=machine.facts_at)
