"""The `experiments` table and the copy of their logs (`experiment_logs`), in the platform's SQL
database beside `machines`.

A log is kept as chunks in the order the machine wrote them, each at its byte offset; a chunk is
appended and the experiment's `log_bytes` moved on in one transaction, and only from the offset
the table holds: whatever happens to the connection or to the service, a byte is kept once.
The API token's secret is never stored here (only its id), nor the values of the variables
given: a queued experiment's are sealed in `experiment_launches` until it starts
(`queued_launches`).
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field, replace
from typing import Any

import sqlalchemy as sa
from platform_database import add_missing_columns, create_tables
from sqlalchemy.ext.asyncio import AsyncEngine

from platform_machines.errors import ExperimentNotFoundError
from platform_machines.ray_spec import RaySpec, ray_from_json

metadata = sa.MetaData()

ACTIVE = ("starting", "running")  # these hold their GPUs
QUEUED = "queued"  # waits for GPUs of its machine: holds none
ENDED = ("succeeded", "failed", "cancelled", "lost")

experiments = sa.Table(
    "experiments",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("team", sa.String(64), nullable=False),
    sa.Column("machine_id", sa.String(32), nullable=False, index=True),
    sa.Column("machine_name", sa.String(200), nullable=False),
    sa.Column("repository", sa.Text, nullable=False),
    sa.Column("ref", sa.String(255), nullable=False, server_default=""),
    sa.Column("command", sa.Text, nullable=False),
    sa.Column("gpus", sa.Integer, nullable=False),
    sa.Column("gpu_indices", sa.Text, nullable=False, server_default="[]"),  # JSON
    sa.Column("gpu_uuids", sa.Text, nullable=False, server_default="[]"),  # JSON
    sa.Column("env_names", sa.Text, nullable=False, server_default="[]"),  # JSON
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("status_reason", sa.Text, nullable=False, server_default=""),
    sa.Column("exit_code", sa.Integer, nullable=True),
    sa.Column("created_at", sa.Double, nullable=False),
    sa.Column("started_at", sa.Double, nullable=False, server_default="0"),
    sa.Column("ended_at", sa.Double, nullable=False, server_default="0"),
    sa.Column("run_dir", sa.Text, nullable=False, server_default=""),
    sa.Column("log_bytes", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("platform_url", sa.Text, nullable=False, server_default=""),
    sa.Column("forward_port", sa.Integer, nullable=False, server_default="0"),  # on the machine; 0: none
    sa.Column("token_id", sa.String(64), nullable=False, server_default=""),
    sa.Column("folder", sa.Text, nullable=False, server_default=""),  # uploaded from the platform's host; "": cloned
    sa.Column("share_gpus", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("ray", sa.Text, nullable=False, server_default=""),  # JSON of ray_spec.RaySpec; "": no Ray cluster
)
ADDED_COLUMNS = ("folder", "share_gpus", "ray")  # after the first version of the table

experiment_logs = sa.Table(
    "experiment_logs",
    metadata,
    sa.Column("experiment_id", sa.String(32), primary_key=True),
    sa.Column("offset", sa.BigInteger, primary_key=True),
    sa.Column("end", sa.BigInteger, nullable=False),
    sa.Column("data", sa.LargeBinary, nullable=False),
)


@dataclass(frozen=True)
class StoredExperiment:
    id: str
    team: str
    machine_id: str
    machine_name: str
    repository: str
    ref: str
    command: str
    gpus: int
    status: str
    gpu_indices: tuple[int, ...] = ()
    gpu_uuids: tuple[str, ...] = ()
    env_names: tuple[str, ...] = ()
    status_reason: str = ""
    exit_code: int | None = None
    created_at: float = 0.0
    started_at: float = 0.0
    ended_at: float = 0.0
    run_dir: str = ""
    log_bytes: int = 0
    platform_url: str = ""
    forward_port: int = 0
    token_id: str = ""
    folder: str = ""
    share_gpus: bool = False
    ray: RaySpec | None = None  # its Ray cluster: the settings and the workers' states
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def ended(self) -> bool:
        return self.status in ENDED


def new_experiment_id() -> str:
    return "x-" + secrets.token_hex(6)


def _row(x: StoredExperiment) -> dict[str, Any]:
    return {
        "id": x.id, "team": x.team, "machine_id": x.machine_id, "machine_name": x.machine_name,
        "repository": x.repository, "ref": x.ref, "command": x.command, "gpus": x.gpus,
        "gpu_indices": json.dumps(list(x.gpu_indices)), "gpu_uuids": json.dumps(list(x.gpu_uuids)),
        "env_names": json.dumps(list(x.env_names)), "status": x.status, "status_reason": x.status_reason,
        "exit_code": x.exit_code, "created_at": x.created_at, "started_at": x.started_at, "ended_at": x.ended_at,
        "run_dir": x.run_dir, "log_bytes": x.log_bytes, "platform_url": x.platform_url,
        "forward_port": x.forward_port, "token_id": x.token_id, "folder": x.folder, "share_gpus": x.share_gpus,
        "ray": x.ray.to_json() if x.ray else "",
    }


def _experiment(row: Any) -> StoredExperiment:
    return StoredExperiment(
        id=row.id, team=row.team, machine_id=row.machine_id, machine_name=row.machine_name,
        repository=row.repository, ref=row.ref, command=row.command, gpus=row.gpus, status=row.status,
        gpu_indices=tuple(json.loads(row.gpu_indices)), gpu_uuids=tuple(json.loads(row.gpu_uuids)),
        env_names=tuple(json.loads(row.env_names)), status_reason=row.status_reason, exit_code=row.exit_code,
        created_at=row.created_at, started_at=row.started_at, ended_at=row.ended_at, run_dir=row.run_dir,
        log_bytes=row.log_bytes, platform_url=row.platform_url, forward_port=row.forward_port,
        token_id=row.token_id, folder=row.folder,
        share_gpus=bool(row.share_gpus), ray=ray_from_json(row.ray))


class ExperimentStore:
    """The experiments and their logs on an engine of `platform_database.open_engine`."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def create_tables(self) -> None:
        await create_tables(self.engine, metadata, add_missing_columns(experiments, *ADDED_COLUMNS))

    async def add(self, experiment: StoredExperiment) -> StoredExperiment:
        experiment = replace(experiment, created_at=experiment.created_at or time.time())
        async with self.engine.begin() as conn:
            await conn.execute(experiments.insert().values(**_row(experiment)))
        return experiment

    async def queued(self, machine_id: str | None = None) -> list[StoredExperiment]:
        """The queued experiments (of one machine), in the order they start: oldest first."""
        query = (experiments.select().where(experiments.c.status == QUEUED)
                 .order_by(experiments.c.created_at, experiments.c.id))
        if machine_id is not None:
            query = query.where(experiments.c.machine_id == machine_id)
        async with self.engine.connect() as conn:
            return [_experiment(row) for row in (await conn.execute(query)).all()]

    async def queue_positions(self) -> dict[str, int]:
        """Each queued experiment's place on its machine's queue (1: the next to start)."""
        positions: dict[str, int] = {}
        seen: dict[str, int] = {}
        for x in await self.queued():
            seen[x.machine_id] = seen.get(x.machine_id, 0) + 1
            positions[x.id] = seen[x.machine_id]
        return positions

    async def started_between(self, since: float, until: float, team: str | None = None) -> list[StoredExperiment]:
        """Experiments on GPUs that ran some time in [since, until): started before `until`,
        and not ended, or ended after `since`."""
        query = experiments.select().where(
            experiments.c.gpus > 0, experiments.c.started_at > 0, experiments.c.started_at < until,
            sa.or_(experiments.c.ended_at == 0, experiments.c.ended_at >= since))
        if team is not None:
            query = query.where(experiments.c.team == team)
        async with self.engine.connect() as conn:
            return [_experiment(row) for row in (await conn.execute(query)).all()]

    async def status_counts(self) -> dict[str, int]:
        """How many rows of `experiments` there are per status (the metrics)."""
        query = sa.select(experiments.c.status, sa.func.count()).group_by(experiments.c.status)
        async with self.engine.connect() as conn:
            return {status: int(n) for status, n in (await conn.execute(query)).all()}

    async def get(self, experiment_id: str) -> StoredExperiment:
        async with self.engine.connect() as conn:
            row = (await conn.execute(experiments.select().where(experiments.c.id == experiment_id))).first()
        if row is None:
            raise ExperimentNotFoundError(f"experiment '{experiment_id}' not found")
        return _experiment(row)

    async def list(self, team: str | None = None, machine_id: str | None = None,
                   statuses: tuple[str, ...] | None = None) -> list[StoredExperiment]:
        """Newest first."""
        query = experiments.select().order_by(experiments.c.created_at.desc(), experiments.c.id)
        if team is not None:
            query = query.where(experiments.c.team == team)
        if machine_id is not None:
            query = query.where(experiments.c.machine_id == machine_id)
        if statuses is not None:
            query = query.where(experiments.c.status.in_(statuses))
        async with self.engine.connect() as conn:
            return [_experiment(row) for row in (await conn.execute(query)).all()]

    async def update(self, experiment_id: str, *, unless_ended: bool = False, if_status: str | None = None,
                     **values: Any) -> StoredExperiment:
        """Set columns; with `unless_ended`, an experiment that ended already is left as it is;
        with `if_status`, one whose status is another."""
        where = experiments.c.id == experiment_id
        if unless_ended:
            where = sa.and_(where, experiments.c.status.not_in(ENDED))
        if if_status is not None:
            where = sa.and_(where, experiments.c.status == if_status)
        async with self.engine.begin() as conn:
            await conn.execute(experiments.update().where(where).values(**values))
        return await self.get(experiment_id)

    async def delete(self, experiment_id: str) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(experiment_logs.delete().where(experiment_logs.c.experiment_id == experiment_id))
            await conn.execute(experiments.delete().where(experiments.c.id == experiment_id))

    async def append_log(self, experiment_id: str, offset: int, data: bytes) -> int:
        """Keep `data` as the log's bytes from `offset`, when the table holds exactly `offset`
        bytes; returns the bytes held after (unchanged when `offset` was not the end)."""
        async with self.engine.begin() as conn:
            moved = await conn.execute(
                experiments.update()
                .where(experiments.c.id == experiment_id, experiments.c.log_bytes == offset)
                .values(log_bytes=offset + len(data)))
            if moved.rowcount == 1 and data:
                await conn.execute(experiment_logs.insert().values(
                    experiment_id=experiment_id, offset=offset, end=offset + len(data), data=data))
            held = (await conn.execute(sa.select(experiments.c.log_bytes)
                                       .where(experiments.c.id == experiment_id))).scalar_one()
        return int(held)

    async def read_log(self, experiment_id: str, offset: int, max_bytes: int) -> bytes:
        """The kept log's bytes from `offset`, at most `max_bytes`."""
        query = (sa.select(experiment_logs.c.offset, experiment_logs.c.data)
                 .where(experiment_logs.c.experiment_id == experiment_id, experiment_logs.c.end > offset)
                 .order_by(experiment_logs.c.offset))
        out = bytearray()
        async with self.engine.connect() as conn:
            for start, data in (await conn.execute(query)).all():
                out += bytes(data)[max(offset - start, 0):]
                if len(out) >= max_bytes:
                    break
        return bytes(out[:max_bytes])
