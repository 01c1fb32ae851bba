"""A file of an experiment's run folder on its machine, read by byte range over SSH (the evals
service brings an eval's logs back this way): `platform.machines.experiments.fetch`.

The path is relative to the run folder (`logs/x.eval`), without `..`; the machine must be
reachable (running or ended, as long as the run folder is there). The reads of one file share
one SSH connection (`KeptConnections`: kept a few seconds after a read), each its own session;
a kept connection found broken is dialled again once.
"""

from __future__ import annotations

import asyncio
import shlex
from dataclasses import dataclass
from pathlib import PurePosixPath

import asyncssh

from platform_machines.errors import ExperimentUnavailableError, InvalidExperimentError, MachineError
from platform_machines.experiment_script import run_dir_expr
from platform_machines.experiment_store import ExperimentStore
from platform_machines.kept_connections import IDLE_S, KeptConnections
from platform_machines.machine_store import MachineStore
from platform_machines.ssh_connections import SshDialer

MAX_FETCH_BYTES = 512 * 1024  # a NATS reply holds it with room to spare


@dataclass(frozen=True)
class FilePiece:
    data: bytes
    offset: int
    size: int  # the whole file's size when it was read


def checked_path(path: str) -> str:
    """`path` when it names something inside the run folder; InvalidExperimentError otherwise."""
    parts = PurePosixPath(path).parts
    if (not path or path.startswith("/") or any(part in ("..", ".") for part in parts) or "\n" in path
            or "\0" in path or len(path) > 1024):
        raise InvalidExperimentError(f"path {path!r}: give a path inside the run folder, relative to it "
                                     "(e.g. logs/x.eval), without '..'", field="path")
    return path


def fetch_command(experiment_id: str, path: str, offset: int, max_bytes: int) -> str:
    """Prints `size=N` (or `missing`, `gone`), then the file's bytes from `offset`."""
    quoted = shlex.quote(path)
    return f"""cd {run_dir_expr(experiment_id)} 2>/dev/null || {{ echo gone; exit 0; }}
[ -f {quoted} ] || {{ echo missing; exit 0; }}
echo "size=$(wc -c < {quoted})"
tail -c +{offset + 1} {quoted} | head -c {max_bytes}
"""


class ExperimentFiles:
    def __init__(self, store: ExperimentStore, machines: MachineStore, dialer: SshDialer,
                 idle_s: float = IDLE_S) -> None:
        self.store = store
        self.machines = machines
        self.connections = KeptConnections(dialer, idle_s)

    async def close(self) -> None:
        await self.connections.close()

    async def fetch(self, experiment_id: str, path: str, offset: int, max_bytes: int) -> FilePiece:
        """Raises ExperimentNotFoundError, InvalidExperimentError (a bad path, no such file),
        ExperimentUnavailableError (the machine cannot be reached)."""
        experiment = await self.store.get(experiment_id)
        checked_path(path)
        limit = min(max_bytes or MAX_FETCH_BYTES, MAX_FETCH_BYTES)
        machine = await self.machines.get(experiment.machine_id)
        command = fetch_command(experiment_id, path, offset, limit).encode()
        for attempt in (1, 2):
            try:
                async with self.connections.use(machine) as connection:
                    result = await connection.run("bash -s", input=command, encoding=None, check=False)
                break
            except (MachineError, asyncssh.Error, OSError, asyncio.TimeoutError) as exc:
                self.connections.forget(machine)
                if attempt == 2 or isinstance(exc, MachineError):  # a dial that failed is not tried again
                    raise ExperimentUnavailableError(f"experiment {experiment_id}: machine '{machine.name}' cannot "
                                                     f"be reached to read {path}: {exc}") from None
        out = result.stdout if isinstance(result.stdout, bytes) else str(result.stdout or "").encode()
        head, _, data = out.partition(b"\n")
        line = head.decode(errors="replace").strip()
        if result.exit_status is None:
            self.connections.forget(machine)
            raise ExperimentUnavailableError(f"experiment {experiment_id}: the connection dropped while reading "
                                             f"{path}: try again")
        if line == "gone":
            raise InvalidExperimentError(f"experiment {experiment_id}: its run folder is gone from machine "
                                         f"'{machine.name}'", field="id")
        if line == "missing":
            raise InvalidExperimentError(f"experiment {experiment_id}: no file {path} in its run folder",
                                         field="path")
        if not line.startswith("size=") or not line[5:].isdigit():
            raise ExperimentUnavailableError(f"experiment {experiment_id}: reading {path} on machine "
                                             f"'{machine.name}' failed: {out[:300].decode(errors='replace')}")
        return FilePiece(data=data, offset=offset, size=int(line[5:]))
