"""An eval's `.eval` logs brought back from its run folder on the machine (by byte range,
`platform.machines.experiments.fetch`) into the recordings storage, and imported.

Every log the runner said it began is fetched, whatever the eval's end: a cancelled eval keeps
the samples it did. A log that cannot be fetched or read is said in the notes (the others are
imported); only when none could be does it fail (EvalError)."""

from __future__ import annotations

import asyncio
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from platform_evals.errors import EvalError, InvalidEvalError
from platform_evals.eval_store import StoredEval
from platform_evals.log_storage import LogStorage
from platform_evals.machines_client import MachinesClient

if TYPE_CHECKING:
    from platform_evals.results_import import ImportedLog


@dataclass
class BroughtBack:
    logs: list[dict[str, Any]] = field(default_factory=list)  # {name, size, status}
    scores: list[dict[str, Any]] = field(default_factory=list)
    samples: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was cut short or could not be read


async def bring_back(stored: StoredEval, machines: MachinesClient, storage: LogStorage) -> BroughtBack:
    found = BroughtBack()
    with tempfile.TemporaryDirectory(prefix="eval-import-") as scratch:
        for path in stored.runner.logs:
            name = Path(path).name
            local = Path(scratch) / name
            try:
                await _fetch(machines, stored.experiment_id, path, local)
            except InvalidEvalError as exc:  # gone from the machine (never written, or removed)
                found.notes.append(f"{name}: not brought back: {exc}")
                continue
            await asyncio.to_thread(storage.put, stored.id, name, local)
            try:
                imported = await asyncio.to_thread(_import_log, local, name)
            except Exception as exc:  # noqa: BLE001 - Inspect's reader on a log cut before its header
                found.logs.append({"name": name, "size": local.stat().st_size, "status": "unreadable"})
                found.notes.append(f"{name}: kept, but unreadable: {type(exc).__name__}: {exc}")
                continue
            found.logs.append({"name": name, "size": local.stat().st_size, "status": imported.status})
            found.scores.extend(imported.scores)
            found.samples.extend(imported.samples)
            found.notes.extend([imported.note] if imported.note else [])
    if stored.runner.logs and not found.logs:
        raise EvalError("; ".join(found.notes))
    return found


def _import_log(local: Path, name: str) -> ImportedLog:
    """Inspect's log reader, imported when a log comes back rather than when the service starts
    (importing inspect_ai takes over 2 s of CPU), and in the worker thread that reads the log: on
    the event loop that import kept the service from answering anything (over 10 s on a busy
    machine)."""
    from platform_evals.results_import import import_log

    return import_log(local, name)


async def _fetch(machines: MachinesClient, experiment_id: str, path: str, dest: Path) -> None:
    offset = 0
    with dest.open("wb") as out:
        while True:
            piece = await machines.fetch(experiment_id, path, offset)
            out.write(piece.data)
            offset += len(piece.data)
            if offset >= piece.size or not piece.data:
                return
