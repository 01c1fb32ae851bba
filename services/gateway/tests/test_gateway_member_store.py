"""The members table (`platform_gateway.identity.members`) on SQLite and on the real PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from platform_database import open_engine
from platform_gateway.identity.members import MemberExistsError, MemberStore


@pytest.fixture(params=["sqlite", "postgresql"])
async def members(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MemberStore]:
    url = (f"sqlite+aiosqlite:///{tmp_path}/platform.db" if request.param == "sqlite"
           else str(request.getfixturevalue("postgres_database")))
    store = MemberStore(open_engine(url))
    await store.create_tables()
    await store.create_tables()  # a second service starting on the same database
    yield store
    await store.engine.dispose()


async def test_members_are_added_found_listed_and_removed(members: MemberStore) -> None:
    alice = await members.add("alice@example.com", "acme", "member", "admin")
    await members.add("sub-42", "acme", "admin", "admin")
    await members.add("bob", "blue", "member", "tok-1")
    with pytest.raises(MemberExistsError, match="'bob' is a member of team 'blue' already"):
        await members.add("bob", "acme", "member", "admin")
    assert await members.get("alice@example.com") == alice
    # by sub first, then by email: the first of the subjects that is a member
    assert (await members.find("sub-42", "alice@example.com")).subject == "sub-42"  # type: ignore[union-attr]
    assert (await members.find("unknown", "alice@example.com")).subject == "alice@example.com"  # type: ignore[union-attr]
    assert await members.find("", "nobody") is None
    assert [m.subject for m in await members.list()] == ["alice@example.com", "sub-42", "bob"]
    assert [m.subject for m in await members.list("blue")] == ["bob"]
    assert await members.count("acme") == 2
    assert (await members.remove("bob")).team == "blue"  # type: ignore[union-attr]
    assert await members.remove("bob") is None
    assert await members.count("blue") == 0
