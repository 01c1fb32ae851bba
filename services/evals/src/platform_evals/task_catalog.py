"""What each task of `inspect_evals` needs, from the package's own metadata (each eval's
`eval.yaml`: its tasks, `metadata.sandbox`, `metadata.requires`, `external_assets`, and the
`dependency` extra), read from the installed package without importing it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

import yaml  # type: ignore[import-untyped]  # inspect-ai's own dependency, without stubs here

PACKAGE = "inspect_evals"


@dataclass(frozen=True)
class TaskNeeds:
    task: str  # "inspect_evals/<name>"
    sandbox: tuple[str, ...] = ()  # the parts run in a sandbox ("solver", "scorer"); empty: none
    supports_k8s: bool = False
    internet: bool = False
    gpus: int = 0
    downloads: tuple[str, ...] = ()  # "huggingface: owner/dataset", "direct_url: https://...", ...
    dependency: str = ""  # the extra of inspect-evals it needs installed


def _needs(name: str, meta: dict[str, Any]) -> TaskNeeds:
    metadata = meta.get("metadata") or {}
    requires = metadata.get("requires") or {}
    gpu = requires.get("gpu") or {}
    sandbox = metadata.get("sandbox") or []
    downloads = tuple(f"{asset.get('type', 'download')}: {asset.get('source', '?')}"
                      for asset in meta.get("external_assets") or [] if isinstance(asset, dict))
    return TaskNeeds(task=f"{PACKAGE}/{name}", sandbox=tuple(str(part) for part in sandbox),
                     supports_k8s=bool(metadata.get("supports_k8s")), internet=bool(requires.get("internet")),
                     gpus=int(gpu.get("count", 0) if isinstance(gpu, dict) else 0), downloads=downloads,
                     dependency=str(meta.get("dependency") or ""))


@cache
def catalog() -> dict[str, TaskNeeds]:
    """Every task of the installed inspect_evals by its name ("inspect_evals/<task>")."""
    found: dict[str, TaskNeeds] = {}
    for folder in files(PACKAGE).iterdir():
        listing = folder / "eval.yaml"
        if not listing.is_file():
            continue
        meta = yaml.safe_load(listing.read_text()) or {}
        for task in meta.get("tasks") or []:
            if isinstance(task, dict) and task.get("name"):
                needs = _needs(str(task["name"]), meta)
                found[needs.task] = needs
    return found


def task_needs(task: str) -> TaskNeeds | None:
    """What an inspect_evals task needs; None for a task of another package (nothing known)."""
    return catalog().get(task)
