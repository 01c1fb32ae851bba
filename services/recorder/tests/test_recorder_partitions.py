"""Recorders sharing the session partitions through their leases (platform_recorder.partitions),
on a real nats-server: the shares, a release for a newcomer, a stopped recorder's partitions
taken at once, a dead one's once its leases expire, and a recorder that cannot renew stops
writing before anyone may take over."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from platform_contracts import subjects
from platform_recorder.partitions import PARTITIONS, PartitionLeases, fair_share

LEASE_S = 2.0


class Recorder:
    """A PartitionLeases whose hold and drop callbacks keep a record of the loops it would run;
    the tests call its turns (started with `keep=False`)."""

    def __init__(self, js: Any, name: str, clock: Any = None) -> None:
        self.running: set[int] = set()
        self.drops: list[int] = []
        extra = {"clock": clock} if clock is not None else {}
        self.leases = PartitionLeases(js, name, self._hold, self._drop, lease_s=LEASE_S, **extra)

    async def _hold(self, partition: int) -> None:
        self.running.add(partition)

    async def _drop(self, partition: int) -> None:
        self.running.discard(partition)
        self.drops.append(partition)

    async def turn(self) -> None:
        await self.leases.turn()
        await asyncio.sleep(0)  # the background holds run
        await asyncio.sleep(0)


async def _owners(js: Any) -> dict[int, str]:
    kv = await js.key_value(subjects.RECORDER_LEASES_BUCKET)
    owners = {}
    for partition in range(PARTITIONS):
        try:
            owners[partition] = (await kv.get(f"partition.{partition}")).value.decode()
        except Exception:  # noqa: BLE001 - not held
            continue
    return owners


@pytest.mark.parametrize(("members", "shares"), [(1, [8]), (2, [4, 4]), (3, [3, 3, 2]), (9, [1] * 8 + [0])])
def test_fair_shares_cover_every_partition_once(members: int, shares: list[int]) -> None:
    assert [fair_share(rank, members) for rank in range(members)] == shares
    assert sum(shares) == PARTITIONS


async def test_two_recorders_split_the_partitions_and_the_second_takes_all_when_the_first_stops(
    recorder_js: tuple[Any, Any],
) -> None:
    _, js = recorder_js
    first, second = Recorder(js, "first"), Recorder(js, "second")
    await first.leases.start(keep=False)
    assert first.leases.held == list(range(PARTITIONS)) and first.running == set(range(PARTITIONS))

    await second.leases.start(keep=False)  # a member now, holding nothing yet: the first has them all
    assert second.leases.held == []
    await first.turn()  # two members: the first keeps its share and releases the rest
    assert first.leases.held == [0, 1, 2, 3] and first.drops == [7, 6, 5, 4]
    await second.turn()
    assert second.leases.held == [4, 5, 6, 7] and second.running == {4, 5, 6, 7}
    assert await _owners(js) == {p: "first" if p < 4 else "second" for p in range(PARTITIONS)}

    await first.leases.stop()  # released: taken at the second's next turn
    assert first.running == set()
    await second.turn()
    assert second.leases.held == list(range(PARTITIONS))
    assert set((await _owners(js)).values()) == {"second"}
    await second.leases.stop()
    assert await _owners(js) == {}


async def test_a_dead_recorders_partitions_are_taken_once_its_leases_expire(recorder_js: tuple[Any, Any]) -> None:
    _, js = recorder_js
    dead, alive = Recorder(js, "dead"), Recorder(js, "alive")
    await dead.leases.start(keep=False)
    await alive.leases.start(keep=False)
    await dead.turn()
    await alive.turn()
    assert dead.leases.held == [0, 1, 2, 3] and alive.leases.held == [4, 5, 6, 7]
    # "dead" stops renewing (killed: no release); until its keys expire nobody takes them
    await alive.turn()
    assert alive.leases.held == [4, 5, 6, 7]
    for _ in range(6):  # "alive" keeps renewing (every quarter lease) while "dead"'s keys expire
        await asyncio.sleep(LEASE_S / 4)
        await alive.turn()
    # its partition keys expired with its member key: all 8 are the share of "alive"
    assert alive.leases.held == list(range(PARTITIONS))
    assert set((await _owners(js)).values()) == {"alive"}
    await alive.leases.stop()


async def test_a_recorder_that_cannot_renew_stops_writing_before_its_lease_ends(recorder_js: tuple[Any, Any]) -> None:
    _, js = recorder_js
    now = [1000.0]
    cut_off = Recorder(js, "cut-off", clock=lambda: now[0])
    await cut_off.leases.start(keep=False)
    assert all(cut_off.leases.holds(p) for p in range(PARTITIONS))
    now[0] += LEASE_S * 0.5  # no renewal for half a lease: still its own
    assert cut_off.leases.holds(0)
    now[0] += LEASE_S * 0.3  # past three quarters: it stops writing, a quarter lease before the key expires
    assert not any(cut_off.leases.holds(p) for p in range(PARTITIONS))
    await cut_off.turn()  # renewed: writes again
    assert all(cut_off.leases.holds(p) for p in range(PARTITIONS))
    await cut_off.leases.stop()


async def test_a_partition_taken_over_meanwhile_is_dropped_at_the_next_renewal(recorder_js: tuple[Any, Any]) -> None:
    _, js = recorder_js
    slow = Recorder(js, "slow")
    await slow.leases.start(keep=False)
    kv = await js.key_value(subjects.RECORDER_LEASES_BUCKET)
    await kv.delete("partition.5")  # as if its lease had expired
    await kv.create("partition.5", b"other")  # and another recorder took it
    await slow.turn()
    assert 5 not in slow.leases.held and 5 in slow.drops and 5 not in slow.running
    assert (await _owners(js))[5] == "other"
    await slow.leases.stop()
    assert await _owners(js) == {5: "other"}, "a release deletes only its own keys"
