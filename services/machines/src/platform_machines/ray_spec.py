"""The Ray settings of an experiment and its workers' states (docs/training.md, "Distributed
training"), as kept in the `ray` column of `experiments` (JSON) and checked on create.

A worker is `starting` (launched: its setup runs, then it waits for the head and joins),
`running` (`ray start` joined the head), `stopped` (the platform stopped it, or never started
it: the experiment ended first) or `failed` (it could not be started, or ended on its own while
the experiment ran; `reason` says why).
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from platform_machines.errors import InvalidExperimentError

MAX_WORKERS = 16
DEFAULT_PORT = 6379
DEFAULT_VENV = ".venv"
FINAL = ("stopped", "failed")
MAX_SETUP = 8192
HOST = re.compile(r"^[A-Za-z0-9_.:\-\[\]]{1,255}$")
VENV = re.compile(r"^[A-Za-z0-9_./\-]{1,255}$")


@dataclass(frozen=True)
class RayWorker:
    machine_id: str
    machine_name: str = ""
    state: str = "starting"
    reason: str = ""
    run_dir: str = ""
    forward_port: int = 0  # the PLATFORM_URL forward on its machine; 0: none yet

    @property
    def final(self) -> bool:
        return self.state in FINAL


@dataclass(frozen=True)
class RaySpec:
    workers: tuple[RayWorker, ...] = ()
    setup: str = ""
    venv: str = DEFAULT_VENV
    port: int = DEFAULT_PORT
    head_address: str = ""
    start_args: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> str:
        data = asdict(self)
        data.pop("extra")
        return json.dumps(data)

    def with_worker(self, n: int, **values: Any) -> RaySpec:
        workers = list(self.workers)
        workers[n] = replace(workers[n], **values)
        return replace(self, workers=tuple(workers))


def worker_run_id(experiment_id: str, n: int) -> str:
    """The run folder's name of worker `n` (0-based) on its machine: `<id>-worker-<n+1>`."""
    return f"{experiment_id}-worker-{n + 1}"


def ray_from_json(text: str) -> RaySpec | None:
    if not text:
        return None
    data = json.loads(text)
    workers = tuple(RayWorker(**w) for w in data.pop("workers", []))
    return RaySpec(workers=workers, **data)


def checked_spec(spec: RaySpec) -> RaySpec:
    """The settings with their defaults, or a 422 naming the field (the machines are checked by
    `ray_cluster.RayWorkers.check`)."""
    venv = spec.venv or DEFAULT_VENV
    if not VENV.match(venv) or ".." in venv.split("/"):
        raise InvalidExperimentError(f"ray.venv {venv!r}: give a folder of the checkout (letters, digits, ._-/; "
                                     "no '..') or an absolute path", field="ray.venv")
    port = spec.port or DEFAULT_PORT
    if not 1 <= port <= 65535:
        raise InvalidExperimentError(f"ray.port {port}: give a TCP port (1 to 65535)", field="ray.port")
    if spec.head_address and not HOST.match(spec.head_address):
        raise InvalidExperimentError(f"ray.head_address {spec.head_address!r} is not a host name or address",
                                     field="ray.head_address")
    if len(spec.setup) > MAX_SETUP:
        raise InvalidExperimentError(f"ray.setup has {len(spec.setup)} characters; at most {MAX_SETUP}",
                                     field="ray.setup")
    try:
        args = shlex.split(spec.start_args)
    except ValueError as exc:
        raise InvalidExperimentError(f"ray.start_args: {exc}", field="ray.start_args") from None
    if any(a in ("--head", "--block", "--address", "--port") or a.startswith(("--address=", "--port="))
           for a in args):
        raise InvalidExperimentError("ray.start_args: --head, --block, --address and --port are set by the platform",
                                     field="ray.start_args")
    if len(spec.workers) > MAX_WORKERS:
        raise InvalidExperimentError(f"ray.workers has {len(spec.workers)} machines; at most {MAX_WORKERS}",
                                     field="ray.workers")
    return replace(spec, venv=venv, port=port, start_args=shlex.join(args))
