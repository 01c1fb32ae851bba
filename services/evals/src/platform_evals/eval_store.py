"""The `evals` table and each eval's per-sample rows (`eval_samples`), in the platform's SQL
database. No secret is stored: only the names of the variables the eval's process got (their
values go to the machines service for the process, which never stores them either)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, fields, replace
from typing import Any

import sqlalchemy as sa
from platform_database import create_tables
from sqlalchemy.ext.asyncio import AsyncEngine

from platform_evals.errors import EvalNotFoundError
from platform_evals.progress import RunnerState

metadata = sa.MetaData()

ACTIVE = ("queued", "running", "importing")
ENDED = ("succeeded", "failed", "cancelled", "lost")

evals = sa.Table(
    "evals",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("team", sa.String(64), nullable=False, index=True),
    sa.Column("task", sa.String(300), nullable=False),
    sa.Column("task_args", sa.Text, nullable=False, server_default="{}"),  # JSON
    sa.Column("model", sa.String(300), nullable=False),
    sa.Column("model_args", sa.Text, nullable=False, server_default="{}"),  # JSON
    sa.Column("machine_id", sa.String(32), nullable=False),
    sa.Column("machine_name", sa.String(200), nullable=False),
    sa.Column("limit", sa.Integer, nullable=False, server_default="0"),
    sa.Column("epochs", sa.Integer, nullable=False, server_default="0"),
    sa.Column("gpus", sa.Integer, nullable=False, server_default="0"),
    sa.Column("secret_names", sa.Text, nullable=False, server_default="[]"),  # JSON: names only
    sa.Column("packages", sa.Text, nullable=False, server_default="[]"),  # JSON
    sa.Column("requirements", sa.Text, nullable=False, server_default="[]"),  # JSON
    sa.Column("notes", sa.Text, nullable=False, server_default="[]"),  # JSON
    sa.Column("experiment_id", sa.String(32), nullable=False, server_default=""),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("status_reason", sa.Text, nullable=False, server_default=""),
    sa.Column("runner", sa.Text, nullable=False, server_default="{}"),  # JSON: RunnerState
    sa.Column("log_offset", sa.BigInteger, nullable=False, server_default="0"),  # of the experiment's log read
    sa.Column("created_at", sa.Double, nullable=False),
    sa.Column("started_at", sa.Double, nullable=False, server_default="0"),
    sa.Column("ended_at", sa.Double, nullable=False, server_default="0"),
    sa.Column("logs", sa.Text, nullable=False, server_default="[]"),  # JSON: [{name, size, status}]
    sa.Column("scores", sa.Text, nullable=False, server_default="[]"),  # JSON: EvalScore-like dicts
)

eval_samples = sa.Table(
    "eval_samples",
    metadata,
    sa.Column("eval_id", sa.String(32), primary_key=True),
    sa.Column("row", sa.Integer, primary_key=True),
    sa.Column("data", sa.Text, nullable=False),  # JSON: one EvalSample-like dict
)

_JSON = ("task_args", "model_args", "secret_names", "packages", "requirements", "notes", "logs", "scores")


@dataclass(frozen=True)
class StoredEval:
    id: str
    team: str
    task: str
    model: str
    machine_id: str
    machine_name: str
    status: str
    task_args: dict[str, Any] = field(default_factory=dict)
    model_args: dict[str, Any] = field(default_factory=dict)
    limit: int = 0
    epochs: int = 0
    gpus: int = 0
    secret_names: list[str] = field(default_factory=list)
    packages: list[str] = field(default_factory=list)
    requirements: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    experiment_id: str = ""
    status_reason: str = ""
    runner: RunnerState = field(default_factory=RunnerState)
    log_offset: int = 0
    created_at: float = 0.0
    started_at: float = 0.0
    ended_at: float = 0.0
    logs: list[dict[str, Any]] = field(default_factory=list)
    scores: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ended(self) -> bool:
        return self.status in ENDED


def _row(stored: StoredEval) -> dict[str, Any]:
    row: dict[str, Any] = {f.name: getattr(stored, f.name) for f in fields(stored)}
    for name in _JSON:
        row[name] = json.dumps(row[name])
    row["runner"] = stored.runner.to_json()
    return row


def _stored(row: sa.Row[Any]) -> StoredEval:
    values = dict(row._mapping)
    for name in _JSON:
        values[name] = json.loads(values[name])
    values["runner"] = RunnerState.from_json(values["runner"])
    return StoredEval(**values)


class EvalStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def create_tables(self) -> None:
        await create_tables(self.engine, metadata)

    async def add(self, stored: StoredEval) -> StoredEval:
        stored = replace(stored, created_at=stored.created_at or time.time())
        async with self.engine.begin() as conn:
            await conn.execute(evals.insert().values(**_row(stored)))
        return stored

    async def status_counts(self) -> dict[str, int]:
        """How many rows of `evals` there are per status (the metrics)."""
        query = sa.select(evals.c.status, sa.func.count()).group_by(evals.c.status)
        async with self.engine.connect() as conn:
            return {status: int(n) for status, n in (await conn.execute(query)).all()}

    async def get(self, eval_id: str) -> StoredEval:
        async with self.engine.connect() as conn:
            row = (await conn.execute(evals.select().where(evals.c.id == eval_id))).first()
        if row is None:
            raise EvalNotFoundError(f"eval '{eval_id}' not found")
        return _stored(row)

    async def find(self, team: str | None = None, statuses: tuple[str, ...] = ()) -> list[StoredEval]:
        query = evals.select().order_by(evals.c.created_at.desc())
        if team is not None:
            query = query.where(evals.c.team == team)
        if statuses:
            query = query.where(evals.c.status.in_(statuses))
        async with self.engine.connect() as conn:
            return [_stored(row) for row in await conn.execute(query)]

    async def update(self, eval_id: str, *, unless_ended: bool = False, **values: Any) -> StoredEval:
        """Sets `values` (StoredEval's fields); `unless_ended`: not on an eval that ended."""
        row = _row(replace(await self.get(eval_id), **values))
        changes = {name: row[name] for name in values}
        query = evals.update().where(evals.c.id == eval_id).values(**changes)
        if unless_ended:
            query = query.where(evals.c.status.not_in(ENDED))
        async with self.engine.begin() as conn:
            await conn.execute(query)
        return await self.get(eval_id)

    async def delete(self, eval_id: str) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(eval_samples.delete().where(eval_samples.c.eval_id == eval_id))
            await conn.execute(evals.delete().where(evals.c.id == eval_id))

    async def put_samples(self, eval_id: str, samples: list[dict[str, Any]]) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(eval_samples.delete().where(eval_samples.c.eval_id == eval_id))
            if samples:
                await conn.execute(eval_samples.insert(), [
                    {"eval_id": eval_id, "row": index, "data": json.dumps(sample)}
                    for index, sample in enumerate(samples)])

    async def samples(self, eval_id: str) -> list[dict[str, Any]]:
        query = eval_samples.select().where(eval_samples.c.eval_id == eval_id).order_by(eval_samples.c.row)
        async with self.engine.connect() as conn:
            return [json.loads(row.data) for row in await conn.execute(query)]

    async def sample_counts(self) -> dict[str, int]:
        query = sa.select(eval_samples.c.eval_id, sa.func.count()).group_by(eval_samples.c.eval_id)
        async with self.engine.connect() as conn:
            return {row[0]: int(row[1]) for row in await conn.execute(query)}
