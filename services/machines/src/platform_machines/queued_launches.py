"""What a queued experiment needs to start later: its variables (the values given and the
secret of its PLATFORM_TOKEN), kept sealed in the `experiment_launches` table until it starts
or ends, then deleted.

Sealed with Fernet (AES-128-CBC and HMAC-SHA256) under a key derived (HKDF-SHA256) from the
platform's SSH private key, which only the machines service reads: the database alone does not
give the secrets away. A platform key replaced meanwhile cannot open them (`LaunchUnreadableError`).
"""

from __future__ import annotations

import base64
import json

import sqlalchemy as sa
from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from platform_database import create_tables
from sqlalchemy.ext.asyncio import AsyncEngine

from platform_machines.platform_key import PlatformKey

metadata = sa.MetaData()

experiment_launches = sa.Table(
    "experiment_launches",
    metadata,
    sa.Column("experiment_id", sa.String(32), primary_key=True),
    sa.Column("sealed", sa.LargeBinary, nullable=False),
)

HKDF_INFO = b"simulusion-platform queued experiment launch v1"


class LaunchUnreadableError(Exception):
    """The sealed variables are missing or cannot be opened with the platform's key."""


def launch_cipher(key: PlatformKey) -> Fernet:
    secret = key.private.export_private_key("pkcs8-der")
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=HKDF_INFO).derive(secret)
    return Fernet(base64.urlsafe_b64encode(derived))


class QueuedLaunches:
    """`put` when an experiment is queued, `take` when it starts, `drop` when it ends queued."""

    def __init__(self, engine: AsyncEngine, key: PlatformKey) -> None:
        self.engine = engine
        self._cipher = launch_cipher(key)

    async def create_tables(self) -> None:
        await create_tables(self.engine, metadata)

    async def put(self, experiment_id: str, variables: dict[str, str]) -> None:
        sealed = self._cipher.encrypt(json.dumps(variables).encode())
        async with self.engine.begin() as conn:
            await conn.execute(experiment_launches.insert().values(experiment_id=experiment_id, sealed=sealed))

    async def take(self, experiment_id: str) -> dict[str, str]:
        """The variables, deleted from the table.

        Raises:
            LaunchUnreadableError: none kept, or sealed under another platform key.
        """
        query = sa.select(experiment_launches.c.sealed).where(experiment_launches.c.experiment_id == experiment_id)
        async with self.engine.begin() as conn:
            sealed = (await conn.execute(query)).scalar_one_or_none()
            await conn.execute(experiment_launches.delete()
                               .where(experiment_launches.c.experiment_id == experiment_id))
        if sealed is None:
            raise LaunchUnreadableError("its variables and token are not kept (was it queued by another platform?)")
        try:
            variables = json.loads(self._cipher.decrypt(bytes(sealed)))
        except InvalidToken:
            raise LaunchUnreadableError("its variables and token were sealed with another platform key "
                                        "(PLATFORM_SSH_KEY changed since it was queued)") from None
        return {str(name): str(value) for name, value in variables.items()}

    async def drop(self, experiment_id: str) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(experiment_launches.delete()
                               .where(experiment_launches.c.experiment_id == experiment_id))
