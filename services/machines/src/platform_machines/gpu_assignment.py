"""Which of a machine's GPUs an experiment gets.

The machine's GPUs are those of its last check (`facts.gpus`); its starting and running
experiments hold theirs. An experiment that did not ask to share gets GPUs nobody holds (the
lowest indices first). One that asked (`share_gpus`) gets GPUs that no experiment holds alone:
free ones or ones held by other sharing experiments, the least-loaded first (fewest holders,
then the lowest index). So an experiment that did not ask never has a GPU in common with another.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from platform_machines.experiment_store import StoredExperiment


@dataclass(frozen=True)
class Gpu:
    index: int
    uuid: str  # CUDA_VISIBLE_DEVICES names GPUs by UUID (CUDA's default order is not nvidia-smi's)


@dataclass(frozen=True)
class Assigned:
    indices: tuple[int, ...]
    uuids: tuple[str, ...]


def machine_gpus(facts: dict[str, Any]) -> list[Gpu]:
    return [Gpu(int(g["index"]), str(g.get("uuid") or g["index"])) for g in facts.get("gpus", [])]


def assign_gpus(have: list[Gpu], holders: Iterable[StoredExperiment], wanted: int, share: bool) -> Assigned | None:
    """`wanted` GPUs of `have` given what `holders` (the machine's starting and running
    experiments) hold, or None when not enough are available now."""
    if wanted == 0:
        return Assigned((), ())
    alone: set[int] = set()
    shared_by: dict[int, int] = {}
    for holder in holders:
        for index in holder.gpu_indices:
            if holder.share_gpus:
                shared_by[index] = shared_by.get(index, 0) + 1
            else:
                alone.add(index)
    if share:
        candidates = sorted((g for g in have if g.index not in alone), key=lambda g: (shared_by.get(g.index, 0), g.index))
    else:
        candidates = [g for g in have if g.index not in alone and g.index not in shared_by]
    if len(candidates) < wanted:
        return None
    chosen = sorted(candidates[:wanted], key=lambda g: g.index)
    return Assigned(tuple(g.index for g in chosen), tuple(g.uuid for g in chosen))


def holders_text(holders: Iterable[StoredExperiment]) -> str:
    """`GPU 0 by x-..., GPU 1 by x-... (shared)`: who holds which GPU."""
    held = sorted((index, x.id, x.share_gpus) for x in holders for index in x.gpu_indices)
    return ", ".join(f"GPU {i} by {x}{' (shared)' if shared else ''}" for i, x, shared in held) or "none held"
