"""The `machines` table (the machines service owns it) in the platform's SQL database
(PLATFORM_DATABASE_URL: SQLite or PostgreSQL).

A machine belongs to a team and is keyed, in its team, by its host and port as pasted (providers
put many machines behind one address, one port each). It keeps where to connect (user, host,
port, bastions), each hop's pinned host key and the key a hop presented instead (waiting for a
person), its status and the facts of its last successful check. No secret is stored: the
platform's private key lives in its own file (PLATFORM_SSH_KEY).
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

from platform_machines.errors import MachineExistsError, MachineNotFoundError
from platform_machines.ssh_command import SshHop, SshTarget

metadata = sa.MetaData()

machines = sa.Table(
    "machines",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("team", sa.String(64), nullable=False),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("ssh_user", sa.String(64), nullable=False),
    sa.Column("host", sa.String(255), nullable=False),
    sa.Column("port", sa.Integer, nullable=False),
    sa.Column("jumps", sa.Text, nullable=False, server_default="[]"),  # JSON: [{"user", "host", "port"}]
    sa.Column("host_keys", sa.Text, nullable=False, server_default="{}"),  # JSON: hop address -> key line
    sa.Column("pending_host_keys", sa.Text, nullable=False, server_default="{}"),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("status_reason", sa.Text, nullable=False, server_default=""),
    sa.Column("facts", sa.Text, nullable=False, server_default="{}"),  # JSON: MachineFacts as in the reply
    sa.Column("created_at", sa.Double, nullable=False),
    sa.Column("checked_at", sa.Double, nullable=False, server_default="0"),
    sa.Column("facts_at", sa.Double, nullable=False, server_default="0"),
    # A machine behind NAT: the public half of its tunnel key ("" for a machine dialled directly),
    # its tunnel's state ("waiting", "connected", "down") and since when (Unix seconds).
    sa.Column("tunnel_key", sa.Text, nullable=False, server_default=""),
    sa.Column("tunnel_state", sa.String(16), nullable=False, server_default=""),
    sa.Column("tunnel_since", sa.Double, nullable=False, server_default="0"),
    sa.UniqueConstraint("team", "host", "port", name="machines_team_host_port"),
)
# Columns added after the first version: a table an older version made gains them on start.
ADDED_COLUMNS: tuple[str, ...] = ("tunnel_key", "tunnel_state", "tunnel_since")


@dataclass(frozen=True)
class StoredMachine:
    """A row. `facts` is the JSON object of the last successful check's facts."""

    id: str
    team: str
    name: str
    target: SshTarget
    status: str
    status_reason: str = ""
    host_keys: dict[str, str] = field(default_factory=dict)
    pending_host_keys: dict[str, str] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)
    created_at: float = 0.0
    checked_at: float = 0.0
    facts_at: float = 0.0
    tunnel_key: str = ""  # behind NAT: the public half of the machine's tunnel key
    tunnel_state: str = ""
    tunnel_since: float = 0.0


TUNNEL_COLUMNS = ("tunnel_key", "tunnel_state", "tunnel_since")


def new_machine_id() -> str:
    return "m-" + secrets.token_hex(6)


def _row(machine: StoredMachine) -> dict[str, Any]:
    hop = machine.target.machine
    return {
        "id": machine.id, "team": machine.team, "name": machine.name, "ssh_user": hop.user, "host": hop.host,
        "port": hop.port, "jumps": json.dumps([vars(j) for j in machine.target.jumps]),
        "host_keys": json.dumps(machine.host_keys), "pending_host_keys": json.dumps(machine.pending_host_keys),
        "status": machine.status, "status_reason": machine.status_reason, "facts": json.dumps(machine.facts),
        "created_at": machine.created_at, "checked_at": machine.checked_at, "facts_at": machine.facts_at,
        "tunnel_key": machine.tunnel_key, "tunnel_state": machine.tunnel_state, "tunnel_since": machine.tunnel_since,
    }


def _machine(row: Any) -> StoredMachine:
    jumps = tuple(SshHop(str(j["user"]), str(j["host"]), int(j["port"])) for j in json.loads(row.jumps))
    return StoredMachine(
        id=row.id, team=row.team, name=row.name, target=SshTarget(SshHop(row.ssh_user, row.host, row.port), jumps, tunnel=bool(row.tunnel_key)),
        status=row.status, status_reason=row.status_reason, host_keys=json.loads(row.host_keys),
        pending_host_keys=json.loads(row.pending_host_keys), facts=json.loads(row.facts),
        created_at=row.created_at, checked_at=row.checked_at, facts_at=row.facts_at,
        tunnel_key=row.tunnel_key, tunnel_state=row.tunnel_state, tunnel_since=row.tunnel_since)


class MachineStore:
    """The `machines` table on an engine of `platform_database.open_engine`."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def create_tables(self) -> None:
        """Make the table when missing (DatabaseUnavailableError names the database otherwise)."""
        await create_tables(self.engine, metadata, add_missing_columns(machines, *ADDED_COLUMNS))

    async def add(self, machine: StoredMachine) -> StoredMachine:
        """Store a new machine.

        Raises:
            MachineExistsError: the team has a machine at that host and port (names it).
        """
        machine = replace(machine, created_at=machine.created_at or time.time())
        try:
            async with self.engine.begin() as conn:
                await conn.execute(machines.insert().values(**_row(machine)))
        except sa.exc.IntegrityError:
            hop = machine.target.machine
            existing = await self.find(machine.team, hop.host, hop.port)
            named = f" as {existing.name!r} ({existing.id})" if existing else ""
            raise MachineExistsError(
                f"the machine at {hop.address} is added already{named}: check it or remove it first",
                field="ssh") from None
        return machine

    async def status_counts(self) -> dict[str, int]:
        """How many rows of `machines` there are per status (the metrics)."""
        query = sa.select(machines.c.status, sa.func.count()).group_by(machines.c.status)
        async with self.engine.connect() as conn:
            return {status: int(n) for status, n in (await conn.execute(query)).all()}

    async def get(self, machine_id: str) -> StoredMachine:
        """Raises MachineNotFoundError for an unknown id."""
        async with self.engine.connect() as conn:
            row = (await conn.execute(machines.select().where(machines.c.id == machine_id))).first()
        if row is None:
            raise MachineNotFoundError(f"machine '{machine_id}' not found")
        return _machine(row)

    async def find(self, team: str, host: str, port: int) -> StoredMachine | None:
        query = machines.select().where(machines.c.team == team, machines.c.host == host, machines.c.port == port)
        async with self.engine.connect() as conn:
            row = (await conn.execute(query)).first()
        return None if row is None else _machine(row)

    async def list(self, team: str | None = None) -> list[StoredMachine]:
        """The machines (only `team`'s when given), oldest first."""
        query = machines.select().order_by(machines.c.created_at, machines.c.id)
        if team is not None:
            query = query.where(machines.c.team == team)
        async with self.engine.connect() as conn:
            return [_machine(row) for row in (await conn.execute(query)).all()]

    async def save(self, machine: StoredMachine) -> StoredMachine:
        """Write a stored machine's changed state back (MachineNotFoundError when it went meanwhile)."""
        # the tunnel's state has its own writer (set_tunnel_state): a check never overwrites it
        values = {k: v for k, v in _row(machine).items() if k not in ("id", "team", "created_at", *TUNNEL_COLUMNS)}
        async with self.engine.begin() as conn:
            result = await conn.execute(machines.update().where(machines.c.id == machine.id).values(**values))
        if result.rowcount == 0:
            raise MachineNotFoundError(f"machine '{machine.id}' not found")
        return machine

    async def set_tunnel_state(self, machine_id: str, state: str, since: float) -> None:
        """Record a tunnel's state (a machine removed meanwhile is no error)."""
        async with self.engine.begin() as conn:
            await conn.execute(machines.update().where(machines.c.id == machine_id)
                               .values(tunnel_state=state, tunnel_since=since))

    async def tunnel_ports(self) -> set[int]:
        """The loopback ports assigned to tunnels, every team's."""
        query = sa.select(machines.c.port).where(machines.c.tunnel_key != "")
        async with self.engine.connect() as conn:
            return {int(port) for port in (await conn.execute(query)).scalars()}

    async def delete(self, machine_id: str) -> None:
        async with self.engine.begin() as conn:
            result = await conn.execute(machines.delete().where(machines.c.id == machine_id))
        if result.rowcount == 0:
            raise MachineNotFoundError(f"machine '{machine_id}' not found")
