"""Reading a large file of an experiment's run folder by byte range (how the evals service
brings an eval's `.eval` logs back: `platform.machines.experiments.fetch`, 512 KiB a read),
one SSH connection a read (the old way: `idle_s=0`) against the reads sharing one kept
connection (`KeptConnections`, the default).

A real sshd (platform_testing.sshd) on this host is the machine; the file is random bytes (20
MB unless `--mb`) in a run folder made for an experiment row stored in a scratch SQLite, read
piece by piece with `ExperimentFiles.fetch` as the service does, each way `--rounds` times.

    uv run python bench/eval_log_fetch.py
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from platform_database import open_engine
from platform_machines.address_policy import AddressPolicy, parse_networks
from platform_machines.experiment_files import ExperimentFiles
from platform_machines.experiment_store import ExperimentStore, StoredExperiment
from platform_machines.machine_registry import MachineRegistry
from platform_machines.machine_store import MachineStore
from platform_machines.platform_key import load_or_create_key
from platform_machines.ssh_connections import SshDialer
from platform_testing.sshd import SshServer


async def read_whole(files: ExperimentFiles, experiment_id: str, path: str) -> tuple[bytes, int]:
    """The file's bytes and how many reads it took."""
    parts, offset, reads = [], 0, 0
    while True:
        piece = await files.fetch(experiment_id, path, offset, 0)
        reads += 1
        parts.append(piece.data)
        offset += len(piece.data)
        if offset >= piece.size or not piece.data:
            return b"".join(parts), reads


async def measure(root: Path, sshd: SshServer, mb: int, rounds: int) -> dict[str, list[float]]:
    key = load_or_create_key(root / "ssh" / "id_ed25519")
    sshd.authorize(key.authorized_keys_line)
    engine = open_engine(f"sqlite+aiosqlite:///{root / 'platform.db'}")
    machines, store = MachineStore(engine), ExperimentStore(engine)
    for made in (machines, store):
        await made.create_tables()
    dialer = SshDialer(key, AddressPolicy(parse_networks("127.0.0.0/8")), 10.0)
    machine = await MachineRegistry(machines, dialer).add(sshd.ssh_command, "box", "default")
    experiment = await store.add(StoredExperiment(
        id="x-000000000001", team="default", machine_id=machine.id, machine_name=machine.name, repository="",
        ref="", command="true", gpus=0, status="succeeded", created_at=time.time()))
    logs = sshd.home / ".simulusion" / "experiments" / experiment.id / "logs"
    logs.mkdir(parents=True)
    whole = os.urandom(mb * 1024 * 1024)
    (logs / "big.eval").write_bytes(whole)

    times: dict[str, list[float]] = {"one connection a read": [], "one kept connection": []}
    for _ in range(rounds):
        for label, idle_s in (("one connection a read", 0.0), ("one kept connection", 10.0)):
            files = ExperimentFiles(store, machines, dialer, idle_s=idle_s)
            start = time.perf_counter()
            data, reads = await read_whole(files, experiment.id, "logs/big.eval")
            times[label].append(time.perf_counter() - start)
            assert data == whole, "the file read back differs"
            print(f"  {label}: {times[label][-1]:.2f} s, {reads} reads, {files.connections.dials} SSH connections")
            await files.close()
    await engine.dispose()
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=20, help="the file's size in MiB")
    parser.add_argument("--rounds", type=int, default=3, help="times each way is measured")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-fetch-") as scratch, SshServer(Path(scratch) / "sshd") as sshd:
        times = asyncio.run(measure(Path(scratch), sshd, args.mb, args.rounds))
    before, after = (statistics.median(times[k]) for k in ("one connection a read", "one kept connection"))
    print(f"{args.mb} MiB by 512 KiB reads, median of {args.rounds}: one connection a read {before:.2f} s "
          f"({args.mb / before:.1f} MiB/s), one kept connection {after:.2f} s ({args.mb / after:.1f} MiB/s): "
          f"{before / after:.1f}x faster")
    return 0


if __name__ == "__main__":
    sys.exit(main())
