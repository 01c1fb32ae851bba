"""Training runs (`/v0/runs`): the `runs` and `run_metrics` tables in PLATFORM_DATABASE_URL
(SQLite or PostgreSQL, through `platform_database`, beside the API tokens).

A run is a named series of scalars against a step axis, with hyperparameters, tags and the
platform resources it used. Each run belongs to a team (`team`); every read and write here takes
the caller's team (None: any team, the self-hosted platform's one), so another team's run reads
as missing. A metric point is keyed by (run, name, step): writing it again replaces it, so a
client's retry never duplicates. A batch of points is one statement run over all of them
(`executemany` of one upsert), not a round trip per point.

Opened on first use (`RunDirectory`), on the API tokens' engine when there is one, so a
platform that never logs a run opens no database for it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from platform_database import create_tables
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncEngine

from platform_gateway.tables_on_first_use import TablesOnFirstUse

metadata = sa.MetaData()

runs = sa.Table(
    "runs",
    metadata,
    sa.Column("id", sa.String(80), primary_key=True),  # "run-" and 1..64 of [A-Za-z0-9_-]
    sa.Column("team", sa.String(64), nullable=False),
    sa.Column("name", sa.String(128), nullable=False),
    sa.Column("group_name", sa.String(128), nullable=False),  # "group" is an SQL keyword
    sa.Column("seed", sa.BigInteger, nullable=True),
    sa.Column("tags", sa.Text, nullable=False),  # JSON list of str, as given (unioned in order)
    sa.Column("hparams", sa.Text, nullable=False),  # JSON object
    sa.Column("experiment_id", sa.String(200), nullable=True),
    sa.Column("session_ids", sa.Text, nullable=False),  # JSON list
    sa.Column("recording_ids", sa.Text, nullable=False),  # JSON list
    sa.Column("state", sa.String(16), nullable=False),  # "running", "finished", "failed"
    sa.Column("summary", sa.Text, nullable=False),  # JSON object
    sa.Column("created_at", sa.Double, nullable=False),
    sa.Column("updated_at", sa.Double, nullable=False),
    sa.Index("ix_runs_team_created", "team", "created_at"),
)

run_metrics = sa.Table(
    "run_metrics",
    metadata,
    sa.Column("run_id", sa.String(80), primary_key=True),
    sa.Column("name", sa.String(128), primary_key=True),
    sa.Column("step", sa.BigInteger, primary_key=True),
    sa.Column("value", sa.Double, nullable=False),
    sa.Column("time", sa.Double, nullable=False),  # unix seconds
    sa.Column("frames", sa.BigInteger, nullable=True),
)

Scalar = float | int | str | bool | None


@dataclass(frozen=True)
class MetricInfo:
    """One series of a run: how many points, and its last (highest-step) point."""

    name: str
    points: int
    last_step: int
    last_value: float


@dataclass(frozen=True)
class Run:
    id: str
    team: str
    name: str
    group: str
    seed: int | None
    tags: list[str]
    hparams: dict[str, Scalar]
    experiment_id: str | None
    session_ids: list[str]
    recording_ids: list[str]
    state: str
    summary: dict[str, Scalar]
    created_at: float
    updated_at: float
    metrics: list[MetricInfo] = field(default_factory=list)


@dataclass(frozen=True)
class Point:
    name: str
    step: int
    value: float
    time: float
    frames: int | None


@dataclass(frozen=True)
class Series:
    step: list[int]
    value: list[float]
    time: list[float]
    frames: list[int | None]


class RunIdTakenError(Exception):
    """The id names a run of another team."""


def _union(old: Sequence[str], new: Iterable[str]) -> list[str]:
    merged = list(old)
    seen = set(merged)
    for item in new:
        if item not in seen:
            seen.add(item)
            merged.append(item)
    return merged


def thin(n: int, max_points: int) -> list[int]:
    """The indices of `n` points to keep so that at most `max_points` remain, evenly spread and
    keeping the first and the last."""
    if n <= max_points:
        return list(range(n))
    if max_points <= 1:
        return [n - 1]
    return sorted({round(i * (n - 1) / (max_points - 1)) for i in range(max_points)})


class RunStore:
    """The runs and their metrics on an engine of `open_engine` (SQLite or PostgreSQL)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self._postgres = engine.dialect.name == "postgresql"

    async def create_tables(self) -> None:
        """Raises DatabaseUnavailableError: the database cannot be reached (one line naming it)."""
        await create_tables(self.engine, metadata)

    async def create(self, run_id: str, team: str, *, name: str, group: str | None = None, seed: int | None = None,
                     tags: Sequence[str] = (), hparams: Mapping[str, Scalar] | None = None,
                     experiment_id: str | None = None, session_ids: Sequence[str] = (),
                     recording_ids: Sequence[str] = (), now: float | None = None) -> tuple[Run, bool]:
        """Make the run, or when `run_id` is the team's run already merge what is given into it
        (lists unioned, hparams updated; name, group, seed and experiment set when given): the
        run as it is now and whether it was made.

        Raises:
            RunIdTakenError: `run_id` is another team's run.
        """
        now = time.time() if now is None else now
        values = {
            "id": run_id, "team": team, "name": name, "group_name": group or name, "seed": seed,
            "tags": json.dumps(_union([], tags)), "hparams": json.dumps(dict(hparams or {})),
            "experiment_id": experiment_id, "session_ids": json.dumps(_union([], session_ids)),
            "recording_ids": json.dumps(_union([], recording_ids)), "state": "running", "summary": "{}",
            "created_at": now, "updated_at": now,
        }
        try:
            async with self.engine.begin() as conn:
                await conn.execute(runs.insert().values(**values))
        except sa.exc.IntegrityError:
            existing = await self.get(run_id, None)
            if existing is None:  # deleted meanwhile
                return await self.create(run_id, team, name=name, group=group, seed=seed, tags=tags, hparams=hparams,
                                         experiment_id=experiment_id, session_ids=session_ids,
                                         recording_ids=recording_ids, now=now)
            if existing.team != team:
                raise RunIdTakenError(run_id) from None
            changes: dict[str, Any] = {"name": name}
            if group is not None:
                changes["group_name"] = group
            if seed is not None:
                changes["seed"] = seed
            if experiment_id is not None:
                changes["experiment_id"] = experiment_id
            updated = await self.update(run_id, team, tags=tags, hparams=hparams, session_ids=session_ids,
                                        recording_ids=recording_ids, columns=changes, now=now)
            assert updated is not None
            return updated, False
        made = await self.get(run_id, team)
        assert made is not None
        return made, True

    async def update(self, run_id: str, team: str | None, *, state: str | None = None,
                     tags: Sequence[str] = (), hparams: Mapping[str, Scalar] | None = None,
                     session_ids: Sequence[str] = (), recording_ids: Sequence[str] = (),
                     summary: Mapping[str, Scalar] | None = None, columns: Mapping[str, Any] | None = None,
                     now: float | None = None) -> Run | None:
        """Merge the changes into the run (lists unioned, dicts updated); None when the team has
        no such run. Read and written in one transaction (on PostgreSQL the row is locked)."""
        async with self.engine.begin() as conn:
            query = runs.select().where(*_where(run_id, team))
            if self._postgres:
                query = query.with_for_update()
            row = (await conn.execute(query)).first()
            if row is None:
                return None
            m = row._mapping
            values: dict[str, Any] = dict(columns or {})
            values["updated_at"] = time.time() if now is None else now
            if state is not None:
                values["state"] = state
            if tags:
                values["tags"] = json.dumps(_union(json.loads(m["tags"]), tags))
            if session_ids:
                values["session_ids"] = json.dumps(_union(json.loads(m["session_ids"]), session_ids))
            if recording_ids:
                values["recording_ids"] = json.dumps(_union(json.loads(m["recording_ids"]), recording_ids))
            if hparams:
                values["hparams"] = json.dumps({**json.loads(m["hparams"]), **hparams})
            if summary:
                values["summary"] = json.dumps({**json.loads(m["summary"]), **summary})
            await conn.execute(runs.update().where(runs.c.id == run_id).values(**values))
        return await self.get(run_id, team)

    async def get(self, run_id: str, team: str | None) -> Run | None:
        """The run with its series' summaries; None when `team` (None: any) has no such run."""
        async with self.engine.connect() as conn:
            row = (await conn.execute(runs.select().where(*_where(run_id, team)))).first()
            if row is None:
                return None
            infos = await _metric_infos(conn, [run_id])
        return _run(row, infos.get(run_id, []))

    async def list(self, team: str | None, *, experiment_id: str | None = None, group: str | None = None,
                   tag: str | None = None, limit: int = 100) -> list[Run]:
        """The team's runs (None: every run), newest first, filtered."""
        query = runs.select().order_by(runs.c.created_at.desc(), runs.c.id)
        if team is not None:
            query = query.where(runs.c.team == team)
        if experiment_id is not None:
            query = query.where(runs.c.experiment_id == experiment_id)
        if group is not None:
            query = query.where(runs.c.group_name == group)
        if tag is not None:  # narrowed in SQL by the tag's JSON text, then checked exactly
            escaped = json.dumps(tag).replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            query = query.where(runs.c.tags.like(f"%{escaped}%", escape="\\"))
        else:
            query = query.limit(limit)
        async with self.engine.connect() as conn:
            rows = [row for row in (await conn.execute(query)).all()
                    if tag is None or tag in json.loads(row._mapping["tags"])][:limit]
            infos = await _metric_infos(conn, [row._mapping["id"] for row in rows])
        return [_run(row, infos.get(row._mapping["id"], [])) for row in rows]

    async def delete(self, run_id: str, team: str | None) -> bool:
        """Remove the run and its metrics; False when the team has no such run."""
        async with self.engine.begin() as conn:
            gone = (await conn.execute(runs.delete().where(*_where(run_id, team)))).rowcount > 0
            if gone:
                await conn.execute(run_metrics.delete().where(run_metrics.c.run_id == run_id))
        return gone

    async def exists(self, run_id: str, team: str | None) -> bool:
        async with self.engine.connect() as conn:
            query = sa.select(runs.c.id).where(*_where(run_id, team))
            return (await conn.execute(query)).first() is not None

    async def add_points(self, run_id: str, team: str | None, points: Sequence[Point],
                         now: float | None = None) -> int | None:
        """Write the points (one upsert statement over the batch; a point of the same (name, step)
        as a stored one, or as an earlier one of the batch, replaces it): how many were taken, or
        None when `team` (None: any) has no such run (then nothing is written)."""
        latest: dict[tuple[str, int], Point] = {}
        for point in points:
            latest[(point.name, point.step)] = point
        rows = [{"run_id": run_id, "name": p.name, "step": p.step, "value": p.value, "time": p.time,
                 "frames": p.frames} for p in latest.values()]
        insert = (postgresql.insert(run_metrics) if self._postgres else sqlite.insert(run_metrics))
        statement = insert.on_conflict_do_update(
            index_elements=[run_metrics.c.run_id, run_metrics.c.name, run_metrics.c.step],
            set_={"value": insert.excluded.value, "time": insert.excluded.time, "frames": insert.excluded.frames})
        async with self.engine.begin() as conn:
            touched = await conn.execute(runs.update().where(*_where(run_id, team))
                                         .values(updated_at=time.time() if now is None else now))
            if touched.rowcount == 0:
                return None
            if rows:
                await conn.execute(statement, rows)
        return len(points)

    async def series(self, run_id: str, names: Sequence[str] | None = None,
                     max_points: int = 10_000) -> dict[str, Series]:
        """The run's series by name (`names` only, when given), each sorted by step and thinned
        evenly to at most `max_points`, keeping the first and last points."""
        query = (sa.select(run_metrics.c.name, run_metrics.c.step, run_metrics.c.value, run_metrics.c.time,
                           run_metrics.c.frames)
                 .where(run_metrics.c.run_id == run_id).order_by(run_metrics.c.name, run_metrics.c.step))
        if names is not None:
            query = query.where(run_metrics.c.name.in_(list(names)))
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        grouped: dict[str, list[Any]] = {}
        for row in rows:
            grouped.setdefault(row[0], []).append(row)
        found: dict[str, Series] = {}
        for name, points in grouped.items():
            kept = [points[i] for i in thin(len(points), max_points)]
            found[name] = Series([int(p[1]) for p in kept], [float(p[2]) for p in kept], [float(p[3]) for p in kept],
                                 [None if p[4] is None else int(p[4]) for p in kept])
        return found



def _where(run_id: str, team: str | None) -> list[sa.ColumnElement[bool]]:
    where = [runs.c.id == run_id]
    if team is not None:
        where.append(runs.c.team == team)
    return where


async def _metric_infos(conn: Any, run_ids: Sequence[str]) -> dict[str, list[MetricInfo]]:
    """Each run's series: points, last step and the value there (two grouped reads)."""
    if not run_ids:
        return {}
    ids = list(run_ids)
    counts = (sa.select(run_metrics.c.run_id, run_metrics.c.name, sa.func.count().label("points"),
                        sa.func.max(run_metrics.c.step).label("last_step"))
              .where(run_metrics.c.run_id.in_(ids)).group_by(run_metrics.c.run_id, run_metrics.c.name).subquery())
    query = (sa.select(counts.c.run_id, counts.c.name, counts.c.points, counts.c.last_step, run_metrics.c.value)
             .join(run_metrics, sa.and_(run_metrics.c.run_id == counts.c.run_id, run_metrics.c.name == counts.c.name,
                                        run_metrics.c.step == counts.c.last_step))
             .order_by(counts.c.run_id, counts.c.name))
    found: dict[str, list[MetricInfo]] = {}
    for row in (await conn.execute(query)).all():
        found.setdefault(row[0], []).append(MetricInfo(row[1], int(row[2]), int(row[3]), float(row[4])))
    return found


def _run(row: sa.Row[Any], metrics: list[MetricInfo]) -> Run:
    m = row._mapping
    return Run(id=m["id"], team=m["team"], name=m["name"], group=m["group_name"], seed=m["seed"],
               tags=json.loads(m["tags"]), hparams=json.loads(m["hparams"]), experiment_id=m["experiment_id"],
               session_ids=json.loads(m["session_ids"]), recording_ids=json.loads(m["recording_ids"]),
               state=m["state"], summary=json.loads(m["summary"]), created_at=m["created_at"],
               updated_at=m["updated_at"], metrics=metrics)


async def _run_store(engine: AsyncEngine) -> RunStore:
    store = RunStore(engine)
    await store.create_tables()
    return store


class RunDirectory(TablesOnFirstUse[RunStore]):
    """The run store, its tables made on first use.

    Args:
        url: PLATFORM_DATABASE_URL.
        engine: an engine already open on it (the API tokens'), shared and not disposed here.
    """

    def __init__(self, url: str, engine: AsyncEngine | None = None) -> None:
        super().__init__(url, engine, _run_store)
