"""Refusing, before anything runs, an eval whose task needs what its machine lacks (from the
task's own metadata, `task_catalog`, and the machine's last check), and the notes for what the
platform cannot check (data the task downloads when it runs)."""

from __future__ import annotations

from typing import Any

from simulusion.machines.v1 import machines_pb2 as machines_pb

from platform_evals.errors import InvalidEvalError
from platform_evals.task_catalog import TaskNeeds


def platform_task_notes(task: str) -> list[str]:
    """The notes of a task of the platform's SDK (nothing to refuse: it needs the platform alone)."""
    return [f"{task} is the platform's own task: its environment gets platform-sdk[inspect] from the platform's "
            "wheel (GET /v0/wheels/platform-sdk), and its episodes run on the platform (PLATFORM_URL) as your "
            "team, each one recorded"]


def check_task(needs: TaskNeeds | None, machine: machines_pb.Machine, gpus: int,
               task_args: dict[str, Any]) -> list[str]:
    """The notes to show with the eval; raises InvalidEvalError naming what the machine lacks."""
    if needs is None:
        return ["the platform knows nothing of what this task needs (it is not one of inspect_evals): "
                "a missing sandbox or data shows as the eval's error"]
    where = f"machine '{machine.name}' ({machine.id})"
    if needs.sandbox:
        kubernetes = needs.supports_k8s and str(task_args.get("sandbox_type", "")).lower() == "k8s"
        if not machine.facts.docker and not kubernetes:
            alternative = (" (or pass task_args sandbox_type=k8s to use Kubernetes, which this task supports, with "
                           "a kubeconfig on the machine)" if needs.supports_k8s else "")
            raise InvalidEvalError(
                f"{needs.task} runs its {' and '.join(needs.sandbox)} in a Docker sandbox, and {where} has no "
                "Docker its user may run (its last check): install Docker there and add the user to the docker "
                f"group, then check the machine again{alternative}", field="task")
    have = len(machine.facts.gpus)
    if needs.gpus and have < needs.gpus:
        raise InvalidEvalError(f"{needs.task} needs {needs.gpus} GPU{'s' * (needs.gpus != 1)}; {where} has {have} "
                               "(its last check)", field="machine")
    if needs.gpus and gpus < needs.gpus:
        raise InvalidEvalError(f"{needs.task} needs {needs.gpus} GPU{'s' * (needs.gpus != 1)}: ask for gpus: "
                               f"{needs.gpus}", field="gpus")
    notes = []
    if needs.downloads:
        notes.append(f"{needs.task} downloads its data when it runs, so the machine needs to reach it: "
                     + "; ".join(needs.downloads))
    if needs.internet:
        notes.append(f"{needs.task} needs the internet while it runs")
    if needs.sandbox:
        notes.append(f"{needs.task} builds or pulls its sandbox images on the machine when it starts")
    return notes
