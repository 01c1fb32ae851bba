"""The session table (SQLAlchemy Core, async): the same code on SQLite and PostgreSQL.

Rows are read and written as `control.v1.SessionInfo` messages; the spec and the options are
stored as the serialized `SpecResponse` and `SessionOptions`. The options' env id, kwargs,
record and life are columns as well: the life's index needs its column, and a row written
before the options column existed is read from those. State changes are conditional single UPDATEs, so concurrent
writers (a handler, the lifecycle consumer, the idle monitor) never undo each other: a
session that crashed while starting stays crashed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from simulusion.control.v1 import control_pb2
from simulusion.env.v1 import environment_pb2
from simulusion.session.v1.options_pb2 import SessionOptions
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
)
# Columns added after the table's first version: `create_tables` adds them to an older table
# (a NOT NULL one with an empty-string server default, so existing rows read as ""; a nullable
# one as NULL).
ADDED_COLUMNS = ("step_address", "life", "options")
# One open (starting or running) session per life: a second insert fails atomically, on
# SQLite and PostgreSQL alike, even from two brokers at once.
_OPEN_LIFE = sa.and_(sessions.c.life != "", sessions.c.state.in_([_STATE_NAMES[s] for s in OPEN_STATES]))
OPEN_LIFE_INDEX = sa.Index("ix_sessions_open_life", sessions.c.life, unique=True,
                           sqlite_where=_OPEN_LIFE, postgresql_where=_OPEN_LIFE)


def state_name(state: int) -> str:
    return _STATE_NAMES.get(control_pb2.SessionState.ValueType(state), "unspecified")


class SessionStore:
    """Async access to the `sessions` table."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    @classmethod
    def from_url(cls, url: str) -> SessionStore:
        """A store on `url` (see `config.async_database_url`); creates a SQLite file's folder."""
        async_database_url(url)  # an unsupported URL: the broker's ConfigError
        return cls(open_engine(url))

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
        row = _to_row(info)
        for attempt in range(INSERT_ATTEMPTS):
            try:
                async with self.engine.begin() as conn:
                    await conn.execute(sessions.insert().values(**row))
                return
            except sa.exc.IntegrityError:
                holder = await self.life_holder(info.options.life) if info.options.life else None
                if holder is not None:
                    raise LifeHeldError(info.options.life, holder.id) from None
                if not info.options.life or attempt == INSERT_ATTEMPTS - 1:
                    raise
                # The holder closed between the refused insert and the look-up: try again.

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

    async def list(self, states: Iterable[int] | None = None) -> list[control_pb2.SessionInfo]:
        """Sessions in `states` (all when None), oldest first."""
        query = sessions.select().order_by(sessions.c.created_at, sessions.c.id)
        if states is not None:
            query = query.where(sessions.c.state.in_([state_name(s) for s in states]))
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).mappings().all()
        return [_from_row(row) for row in rows]

    async def mark_running(self, session_id: str, spec: environment_pb2.SpecResponse) -> bool:
        """STARTING -> RUNNING with its spec; False when the session is no longer starting."""
        return await self._transition(session_id, (STARTING,), state=state_name(RUNNING),
                                      spec=spec.SerializeToString())

    async def move(self, session_id: str, host_id: str, host_address: str, step_address: str) -> bool:
        """Place a STARTING session on another env host; False when it is no longer starting."""
        return await self._transition(session_id, (STARTING,), host_id=host_id, host_address=host_address,
                                      step_address=step_address)

    async def mark_closed(self, session_id: str, reason: str) -> bool:
        """STARTING/RUNNING -> CLOSED; False when it had already ended (or does not exist)."""
        return await self._transition(session_id, OPEN_STATES, state=state_name(CLOSED), reason=reason)

    async def mark_crashed(self, session_id: str, reason: str, log_tail: str) -> bool:
        """STARTING/RUNNING -> CRASHED; False when it had already ended (or does not exist)."""
        return await self._transition(session_id, OPEN_STATES, state=state_name(CRASHED), reason=reason,
                                      log_tail=log_tail)

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
    """Create the open-life index on a table made before it existed (IF NOT EXISTS: two
    brokers may start at once)."""
    conn.execute(sa.schema.CreateIndex(OPEN_LIFE_INDEX, if_not_exists=True))


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


def _options_from_row(row: Any) -> SessionOptions:
    """The row's options; for a row written before the options column, what its columns kept."""
    if row["options"] is not None:
        return SessionOptions.FromString(bytes(row["options"]))
    return SessionOptions(env_id=row["env_id"], kwargs_json=row["kwargs_json"], record=bool(row["record"]),
                          life=row["life"])
