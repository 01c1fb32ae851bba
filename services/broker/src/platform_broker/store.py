"""The session table (SQLAlchemy Core, async): the same code on SQLite and PostgreSQL.

Rows are read and written as `control.v1.SessionInfo` messages; the spec and the options are
stored as the serialized `SpecResponse` and `SessionOptions`. The options' env id, kwargs,
record and life are columns as well: the life's index needs its column, and a row written
before the options column existed is read from those. State changes are conditional single UPDATEs, so concurrent
writers (a handler, the lifecycle consumer, the idle monitor) never undo each other: a
session that crashed while starting stays crashed.

Each row also keeps its team (`options.team`, "" read as "default") and, once it ended, when
(`ended_at`, set by the same UPDATE that ends it): a session's instance-hours are its row's
`created_at` to `ended_at` (`platform_broker.usage`), so a broker restart or a killed instance
neither loses nor doubles any. A create under a `max_sessions` quota inserts its row only while
the team has fewer open sessions (`insert_within`), in one statement: exact on SQLite
(writers take the database's write lock before the statement reads) and on PostgreSQL (the
team's creates take a transaction-level advisory lock first), even across brokers.
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from simulusion.control.v1 import control_pb2
from simulusion.env.v1 import environment_pb2
from simulusion.session.v1.options_pb2 import SessionOptions
from platform_contracts.teams import DEFAULT_TEAM, owning_team
from platform_database import DatabaseUnavailableError, create_tables, open_engine
from sqlalchemy.ext.asyncio import AsyncEngine

from platform_broker.config import async_database_url
from platform_broker.errors import UnavailableError
from platform_broker.lives import LifeHeldError

STARTING = control_pb2.SESSION_STATE_STARTING
RUNNING = control_pb2.SESSION_STATE_RUNNING
CLOSED = control_pb2.SESSION_STATE_CLOSED
CRASHED = control_pb2.SESSION_STATE_CRASHED
OPEN_STATES = (STARTING, RUNNING)
ENDED_STATES = (CLOSED, CRASHED)

INSERT_ATTEMPTS = 3

_STATE_NAMES: dict[control_pb2.SessionState.ValueType, str] = {
    STARTING: "starting", RUNNING: "running", CLOSED: "closed", CRASHED: "crashed",
}
_STATE_BY_NAME = {name: state for state, name in _STATE_NAMES.items()}

metadata = sa.MetaData()

sessions = sa.Table(
    "sessions",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("env_id", sa.String(128), nullable=False),
    sa.Column("kwargs_json", sa.Text, nullable=False, default="{}"),
    sa.Column("record", sa.Boolean, nullable=False, default=False),
    sa.Column("host_id", sa.String(255), nullable=False, default=""),
    sa.Column("host_address", sa.String(512), nullable=False, default=""),
    sa.Column("state", sa.String(16), nullable=False, index=True),
    sa.Column("created_at", sa.Double, nullable=False),
    sa.Column("last_active_at", sa.Double, nullable=False),
    sa.Column("spec", sa.LargeBinary, nullable=True),
    sa.Column("reason", sa.Text, nullable=False, default=""),
    sa.Column("log_tail", sa.Text, nullable=False, default=""),
    # The env host's step link (host:port) from its heartbeat when the session was placed.
    sa.Column("step_address", sa.String(512), nullable=False, default="", server_default=""),
    # The life the session appends to ("" for none).
    sa.Column("life", sa.String(64), nullable=False, default="", server_default=""),
    # The session's SessionOptions, serialized (NULL in rows written before it existed).
    sa.Column("options", sa.LargeBinary, nullable=True),
    # The team that owns it (`options.team`; "" in rows written before teams: read as "default").
    sa.Column("team", sa.String(64), nullable=False, default="", server_default=""),
    # When it ended (closed or crashed), unix seconds; NULL while open, and in rows that ended
    # before the column existed (their usage ends at their last activity).
    sa.Column("ended_at", sa.Double, nullable=True),
    # What the session is for: "" a user's, "preview" a catalog entry's preview frame made by the
    # gateway (`options.preview`), which counts to no team's usage or quota.
    sa.Column("purpose", sa.String(16), nullable=False, default="", server_default=""),
)
# Columns added after the table's first version: `create_tables` adds them to an older table
# (a NOT NULL one with an empty-string server default, so existing rows read as ""; a nullable
# one as NULL).
ADDED_COLUMNS = ("step_address", "life", "options", "team", "ended_at", "purpose")
PREVIEW_PURPOSE = "preview"
# The rows that count to a team's usage and quotas: every session but the previews.
_COUNTED = sessions.c.purpose != PREVIEW_PURPOSE
# One open (starting or running) session per life: a second insert fails atomically, on
# SQLite and PostgreSQL alike, even from two brokers at once.
_OPEN_LIFE = sa.and_(sessions.c.life != "", sessions.c.state.in_([_STATE_NAMES[s] for s in OPEN_STATES]))
OPEN_LIFE_INDEX = sa.Index("ix_sessions_open_life", sessions.c.life, unique=True,
                           sqlite_where=_OPEN_LIFE, postgresql_where=_OPEN_LIFE)
# A team's open sessions (its max_sessions quota, ListSessions' filter).
TEAM_STATE_INDEX = sa.Index("ix_sessions_team_state", sessions.c.team, sessions.c.state)
# PostgreSQL: the first key of the advisory lock a team's creates under a quota take ("SeSs").
_QUOTA_LOCK_CLASS = 0x53655373


def state_name(state: int) -> str:
    return _STATE_NAMES.get(control_pb2.SessionState.ValueType(state), "unspecified")


def _of_team(team: str) -> sa.ColumnElement[bool]:
    """Rows of `team`: "default" also matches the rows written before teams ("")."""
    name = owning_team(team)
    return sessions.c.team.in_(["", DEFAULT_TEAM]) if name == DEFAULT_TEAM else sessions.c.team == name


@dataclass(frozen=True)
class SessionSpan:
    """What a session's usage is made of: its team, environment, sub-environments and times.

    Attributes:
        ended_at: when it ended; None while it is open, or when it ended before the column
            existed (then `last_active_at` is the best end known).
    """

    id: str
    team: str
    env_id: str
    num_envs: int
    state: int
    created_at: float
    last_active_at: float
    ended_at: float | None

    @property
    def is_open(self) -> bool:
        return self.state in OPEN_STATES

    def end(self, now: float) -> float:
        """Until when it counts: its end, or `now` while it is open."""
        if self.ended_at is not None:
            return max(self.created_at, self.ended_at)
        if self.is_open:
            return max(self.created_at, now)
        return max(self.created_at, self.last_active_at)


class SessionStore:
    """Async access to the `sessions` table."""

    def __init__(self, engine: AsyncEngine, clock: Callable[[], float] = time.time) -> None:
        self.engine = engine
        self.clock = clock  # a session's ended_at

    @classmethod
    def from_url(cls, url: str, clock: Callable[[], float] = time.time) -> SessionStore:
        """A store on `url` (see `config.async_database_url`); creates a SQLite file's folder."""
        async_database_url(url)  # an unsupported URL: the broker's ConfigError
        return cls(open_engine(url), clock)

    async def create_tables(self) -> None:
        """Create the table if missing, and add the columns an older broker's table lacks.

        Raises:
            UnavailableError: the database cannot be reached (the message names it, password hidden).
        """
        try:
            await create_tables(self.engine, metadata, _add_missing_columns, _add_missing_indexes)
        except DatabaseUnavailableError as exc:
            raise UnavailableError(str(exc)) from None

    async def close(self) -> None:
        await self.engine.dispose()

    async def insert(self, info: control_pb2.SessionInfo) -> None:
        """Add a session's row.

        Raises:
            LifeHeldError: the session appends to a life that another open session records.
        """
        await self._insert(info, None)

    async def insert_within(self, info: control_pb2.SessionInfo, max_open: int | None) -> bool:
        """Add a session's row only while its team has fewer than `max_open` open sessions
        (None: no limit), checked and inserted atomically (see the module's doc).

        Returns:
            True when added; False when the team has `max_open` open sessions already.

        Raises:
            LifeHeldError: the session appends to a life that another open session records.
        """
        return await self._insert(info, max_open)

    async def _insert(self, info: control_pb2.SessionInfo, max_open: int | None) -> bool:
        row = _to_row(info)
        for attempt in range(INSERT_ATTEMPTS):
            try:
                async with self.engine.begin() as conn:
                    if max_open is None:
                        await conn.execute(sessions.insert().values(**row))
                        return True
                    return await _insert_under_quota(conn, row, max_open)
            except sa.exc.IntegrityError:
                holder = await self.life_holder(info.options.life) if info.options.life else None
                if holder is not None:
                    raise LifeHeldError(info.options.life, holder.id) from None
                if not info.options.life or attempt == INSERT_ATTEMPTS - 1:
                    raise
                # The holder closed between the refused insert and the look-up: try again.
        return False  # not reached: the last attempt raises

    async def life_teams(self, name: str) -> set[str]:
        """The teams whose sessions have recorded the life `name` ("" read as "default")."""
        query = sa.select(sessions.c.team).where(sessions.c.life == name).distinct()
        async with self.engine.connect() as conn:
            return {owning_team(team) for team in (await conn.execute(query)).scalars()}

    async def life_holder(self, name: str) -> control_pb2.SessionInfo | None:
        """The open (starting or running) session that records the life `name`, if any."""
        query = sessions.select().where(sessions.c.life == name,
                                        sessions.c.state.in_([state_name(s) for s in OPEN_STATES]))
        async with self.engine.connect() as conn:
            row = (await conn.execute(query)).mappings().first()
        return None if row is None else _from_row(row)

    async def get(self, session_id: str) -> control_pb2.SessionInfo | None:
        async with self.engine.connect() as conn:
            row = (await conn.execute(sessions.select().where(sessions.c.id == session_id))).mappings().first()
        return None if row is None else _from_row(row)

    async def list(self, states: Iterable[int] | None = None, team: str | None = None) -> list[control_pb2.SessionInfo]:
        """Sessions in `states` (all when None) of `team` (every team's when None), oldest first."""
        query = sessions.select().order_by(sessions.c.created_at, sessions.c.id)
        if states is not None:
            query = query.where(sessions.c.state.in_([state_name(s) for s in states]))
        if team is not None:
            query = query.where(_of_team(team))
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).mappings().all()
        return [_from_row(row) for row in rows]

    async def counts(self) -> dict[tuple[str, str, str], int]:
        """How many sessions the table holds per (environment, team, state); rows written before
        teams count as the default team's."""
        query = (sa.select(sessions.c.env_id, sessions.c.team, sessions.c.state, sa.func.count())
                 .group_by(sessions.c.env_id, sessions.c.team, sessions.c.state))
        counts: dict[tuple[str, str, str], int] = {}
        async with self.engine.connect() as conn:
            for env_id, team, state, n in (await conn.execute(query)).all():
                key = (env_id, owning_team(team), state)
                counts[key] = counts.get(key, 0) + int(n)
        return counts

    async def count_open(self, team: str) -> int:
        """How many sessions of `team` are open (starting or running); previews are not counted."""
        query = sa.select(sa.func.count()).select_from(sessions).where(_of_team(team), _open(), _COUNTED)
        async with self.engine.connect() as conn:
            return int((await conn.execute(query)).scalar_one())

    async def spans(self, since: float, until: float, team: str | None = None) -> builtins.list[SessionSpan]:
        """The sessions (of `team`, or every team's; previews never) that were open at some time in
        [`since`, `until`), oldest first; rows that ended before `ended_at` existed are among
        them whenever they began before `until` (the caller clips them by `SessionSpan.end`)."""
        query = (sa.select(sessions.c.id, sessions.c.team, sessions.c.env_id, sessions.c.state, sessions.c.created_at,
                           sessions.c.last_active_at, sessions.c.ended_at, sessions.c.options, sessions.c.kwargs_json,
                           sessions.c.record, sessions.c.life)
                 .where(sessions.c.created_at < until,
                        sa.or_(sessions.c.ended_at.is_(None), sessions.c.ended_at >= since), _COUNTED)
                 .order_by(sessions.c.created_at, sessions.c.id))
        if team is not None:
            query = query.where(_of_team(team))
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).mappings().all()
        return [_span(row) for row in rows]

    async def span(self, session_id: str) -> SessionSpan | None:
        """One session's span (its `ended_at` among it), or None."""
        async with self.engine.connect() as conn:
            row = (await conn.execute(sessions.select().where(sessions.c.id == session_id))).mappings().first()
        return None if row is None else _span(row)

    async def mark_running(self, session_id: str, spec: environment_pb2.SpecResponse) -> bool:
        """STARTING -> RUNNING with its spec; False when the session is no longer starting."""
        return await self._transition(session_id, (STARTING,), state=state_name(RUNNING),
                                      spec=spec.SerializeToString())

    async def move(self, session_id: str, host_id: str, host_address: str, step_address: str) -> bool:
        """Place a STARTING session on another env host; False when it is no longer starting."""
        return await self._transition(session_id, (STARTING,), host_id=host_id, host_address=host_address,
                                      step_address=step_address)

    async def mark_closed(self, session_id: str, reason: str) -> bool:
        """STARTING/RUNNING -> CLOSED, ended now; False when it had already ended (or does not exist)."""
        return await self._transition(session_id, OPEN_STATES, state=state_name(CLOSED), reason=reason,
                                      ended_at=self.clock())

    async def mark_crashed(self, session_id: str, reason: str, log_tail: str) -> bool:
        """STARTING/RUNNING -> CRASHED, ended now; False when it had already ended (or does not exist)."""
        return await self._transition(session_id, OPEN_STATES, state=state_name(CRASHED), reason=reason,
                                      log_tail=log_tail, ended_at=self.clock())

    async def touch(self, session_id: str, last_active_at: float) -> bool:
        """Move last_active_at forward (never back); False when it was already as recent."""
        query = (sessions.update()
                 .where(sessions.c.id == session_id, sessions.c.last_active_at < last_active_at)
                 .values(last_active_at=last_active_at))
        async with self.engine.begin() as conn:
            return (await conn.execute(query)).rowcount > 0

    async def _transition(self, session_id: str, from_states: Iterable[int], **values: Any) -> bool:
        query = (sessions.update()
                 .where(sessions.c.id == session_id,
                        sessions.c.state.in_([state_name(s) for s in from_states]))
                 .values(**values))
        async with self.engine.begin() as conn:
            return (await conn.execute(query)).rowcount > 0


def _add_missing_columns(conn: sa.Connection) -> None:
    """ALTER TABLE ... ADD COLUMN for each of `ADDED_COLUMNS` the table lacks. Two brokers may
    start at once: PostgreSQL skips a column added meanwhile (IF NOT EXISTS); SQLite says so."""
    present = {column["name"] for column in sa.inspect(conn).get_columns(sessions.name)}
    postgres = conn.dialect.name == "postgresql"
    for name in ADDED_COLUMNS:
        if name in present:
            continue
        column = sessions.c[name]
        type_ = column.type.compile(conn.dialect)
        constraint = "" if column.nullable else " NOT NULL DEFAULT ''"
        ddl = (f"ALTER TABLE {sessions.name} ADD COLUMN {'IF NOT EXISTS ' if postgres else ''}"
               f"{name} {type_}{constraint}")
        try:
            conn.execute(sa.text(ddl))
        except sa.exc.OperationalError as exc:
            if "duplicate column" not in str(exc):
                raise


def _add_missing_indexes(conn: sa.Connection) -> None:
    """Create the open-life and team indexes on a table made before they existed (IF NOT
    EXISTS: two brokers may start at once)."""
    conn.execute(sa.schema.CreateIndex(OPEN_LIFE_INDEX, if_not_exists=True))
    conn.execute(sa.schema.CreateIndex(TEAM_STATE_INDEX, if_not_exists=True))


def _open() -> sa.ColumnElement[bool]:
    return sessions.c.state.in_([state_name(s) for s in OPEN_STATES])


async def _insert_under_quota(conn: Any, row: dict[str, Any], max_open: int) -> bool:
    """INSERT ... SELECT ... WHERE (the team's open sessions) < max_open, in the caller's
    transaction; whether the row went in."""
    of_team = _of_team(row["team"])
    if conn.dialect.name == "postgresql":  # the team's creates one at a time, until each commits
        await conn.execute(sa.select(sa.func.pg_advisory_xact_lock(_QUOTA_LOCK_CLASS, sa.func.hashtext(row["team"]))))
    open_count = sa.select(sa.func.count()).select_from(sessions).where(of_team, _open(), _COUNTED).scalar_subquery()
    values = sa.select(*[sa.literal(value, sessions.c[name].type).label(name) for name, value in row.items()])
    await conn.execute(sessions.insert().from_select(list(row), values.where(open_count < max_open)))
    found = await conn.execute(sa.select(sessions.c.id).where(sessions.c.id == row["id"]))
    return found.first() is not None


def _to_row(info: control_pb2.SessionInfo) -> dict[str, Any]:
    options = info.options
    return {
        "id": info.id,
        "env_id": options.env_id,
        "kwargs_json": options.kwargs_json or "{}",
        "record": options.record,
        "host_id": info.host_id,
        "host_address": info.host_address,
        "state": state_name(info.state),
        "created_at": info.created_at,
        "last_active_at": info.last_active_at,
        "spec": info.spec.SerializeToString() if info.HasField("spec") else None,
        "reason": info.reason,
        "log_tail": info.log_tail,
        "step_address": info.step_address,
        "life": options.life,
        "options": options.SerializeToString(),
        "team": owning_team(options.team),
        "purpose": PREVIEW_PURPOSE if options.preview else "",
    }


def _from_row(row: Any) -> control_pb2.SessionInfo:
    info = control_pb2.SessionInfo(
        id=row["id"], host_id=row["host_id"], host_address=row["host_address"],
        state=_STATE_BY_NAME.get(row["state"], control_pb2.SESSION_STATE_UNSPECIFIED),
        created_at=row["created_at"], last_active_at=row["last_active_at"], reason=row["reason"],
        log_tail=row["log_tail"], step_address=row["step_address"], options=_options_from_row(row),
    )
    if row["spec"] is not None:
        info.spec.ParseFromString(bytes(row["spec"]))
    return info


def _span(row: Any) -> SessionSpan:
    options = _options_from_row(row)
    return SessionSpan(id=row["id"], team=owning_team(row["team"]), env_id=row["env_id"],
                       num_envs=max(1, options.num_envs), state=_STATE_BY_NAME.get(row["state"], 0),
                       created_at=row["created_at"], last_active_at=row["last_active_at"], ended_at=row["ended_at"])


def _options_from_row(row: Any) -> SessionOptions:
    """The row's options; for a row written before the options column, what its columns kept."""
    if row["options"] is not None:
        return SessionOptions.FromString(bytes(row["options"]))
    return SessionOptions(env_id=row["env_id"], kwargs_json=row["kwargs_json"], record=bool(row["record"]),
                          life=row["life"])
