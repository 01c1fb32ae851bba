"""Warm pools: instances started ahead of sessions, so a new session needs no process start.

`PLATFORM_POOLS="cartpole=2,pong=1"` keeps that many instances of each environment running on
the env hosts, started with the entry's own kwargs and default options, under a pool slot id
(`pool-<env>-<hex>`) instead of a session id. A create with default options (no kwargs, no
`jpeg_quality`, one environment, no life; only `record`, `record_frames` and `auto_reset` may
be set) claims one: the env host gives the instance the session's id and its options. After
each claim, and whenever a warm instance dies or its env host goes, the pool is filled again in
the background, one process start at a time (the emptiest pool first). Pool instances are not
sessions: they are not in the session table, so listings, the idle timeout and usage never see
them; a session that claims one counts from its own create (`platform_broker.usage`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from platform_bus import cancel_requested, stop_task
from simulusion.control.v1 import control_pb2
from simulusion.env.v1 import environment_pb2
from simulusion.session.v1.options_pb2 import SessionOptions

from platform_broker.catalog import Catalog
from platform_broker.envhosts import EnvHostClient
from platform_broker.errors import ConfigError, UnavailableError
from platform_broker.hosts import HostRegistry

log = logging.getLogger(__name__)

POOL_SLOT_PREFIX = "pool-"
MAX_POOL_SIZE = 64
CHECK_INTERVAL_S = 1.0
# A warm instance missing from its host's heartbeats this long after it started is gone.
HEARTBEAT_GRACE_S = 1.0
RETRY_DELAYS_S = (2.0, 5.0, 10.0, 30.0, 60.0)
_POOL_ITEM = re.compile(r"^\s*([A-Za-z0-9_-]+)\s*=\s*([0-9]+)\s*$")


def parse_pools(text: str) -> dict[str, int]:
    """`"cartpole=2,pong=1"` as `{"cartpole": 2, "pong": 1}`; empty text: no pools.

    Raises:
        ConfigError: a part is not `<env id>=<count>`, a count is over MAX_POOL_SIZE, or an env
            id comes twice; the one-line message names the part.
    """
    pools: dict[str, int] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        match = _POOL_ITEM.match(part)
        if match is None:
            raise ConfigError(f"PLATFORM_POOLS: {part.strip()!r} is not <env id>=<count> "
                              f"(e.g. PLATFORM_POOLS=cartpole=2,pong=1)")
        env_id, count = match.group(1), int(match.group(2))
        if count > MAX_POOL_SIZE:
            raise ConfigError(f"PLATFORM_POOLS: {part.strip()!r}: at most {MAX_POOL_SIZE} warm instances "
                              f"per environment")
        if env_id in pools:
            raise ConfigError(f"PLATFORM_POOLS: {env_id!r} is given twice")
        pools[env_id] = count
    return {env_id: count for env_id, count in pools.items() if count > 0}


def check_pool_envs(pools: Mapping[str, int], catalog: Catalog) -> None:
    """Raises ConfigError naming the first pool env id that is not in the catalog."""
    for env_id in pools:
        if env_id not in catalog:
            ids = catalog.ids()
            shown = ", ".join(ids[:12]) + (", ..." if len(ids) > 12 else "")
            raise ConfigError(f"PLATFORM_POOLS: unknown environment {env_id!r}; known: {shown}")


def pool_slot_id(env_id: str) -> str:
    return f"{POOL_SLOT_PREFIX}{env_id}-{secrets.token_hex(4)}"


def pool_options(env_id: str) -> SessionOptions:
    """The options a warm instance of `env_id` is started with: the defaults, as completed by
    `session_options.checked_options`."""
    return SessionOptions(env_id=env_id, kwargs_json="{}", num_envs=1)


def takes_pooled(options: SessionOptions) -> bool:
    """Whether a create (its checked options) can be served by a warm instance: every option is
    the pool's default but those a claim gives the instance (record, record_frames, auto_reset)
    and those about the session rather than its instance (team, closes_with_page); any other
    one set, a life included, makes the create start its own. A preview never takes one."""
    if options.preview:  # the gateway's preview of the entry: a user's Start must still find the pool
        return False
    rest = SessionOptions()
    rest.CopyFrom(options)
    rest.record = rest.record_frames = rest.auto_reset = False
    rest.team = ""  # who owns the session, not how its instance runs
    rest.closes_with_page = False  # when the gateway closes it, not how its instance runs
    return rest == pool_options(options.env_id)


@dataclass
class PoolSlot:
    """A warm instance: its slot id (the session id it was started under) and where it runs."""

    slot_id: str
    env_id: str
    host_id: str
    ready_at: float  # the keeper's clock


class PoolKeeper:
    """Keeps `targets[env_id]` warm instances per environment and hands them to sessions.

    Args:
        targets: warm instances wanted per env id (ids of the catalog).
        check_interval: seconds between two checks of the pools (a claim checks at once).
        clock: monotonic seconds, the same clock as the HostRegistry's.
    """

    def __init__(self, targets: Mapping[str, int], catalog: Catalog, hosts: HostRegistry,
                 envhosts: EnvHostClient, *, check_interval: float = CHECK_INTERVAL_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.targets = dict(targets)
        self.catalog = catalog
        self.hosts = hosts
        self.envhosts = envhosts
        self.check_interval = check_interval
        self._clock = clock
        self._warm: dict[str, list[PoolSlot]] = {env_id: [] for env_id in self.targets}
        self._starting: dict[str, int] = dict.fromkeys(self.targets, 0)
        self._failures: dict[str, int] = dict.fromkeys(self.targets, 0)
        self._retry_at: dict[str, float] = dict.fromkeys(self.targets, 0.0)
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def warm(self, env_id: str) -> list[PoolSlot]:
        """The warm instances of `env_id` (a copy)."""
        return list(self._warm.get(env_id, []))

    def start(self) -> None:
        if self.targets and self._task is None:
            self._task = asyncio.create_task(self._run(), name="broker-pools")

    async def stop(self) -> None:
        """Stop filling; warm instances stay (the next broker's reconcile stops them)."""
        tasks = [t for t in (self._task, *self._tasks) if t is not None]
        await asyncio.gather(*(stop_task(task, logger=log) for task in tasks))
        self._task = None

    def take(self, env_id: str) -> PoolSlot | None:
        """A warm instance of `env_id` on a live env host, removed from the pool (which is
        filled again in the background); None when there is none."""
        slots = self._warm.get(env_id)
        while slots:
            slot = slots.pop(0)
            self._wake.set()
            if self.hosts.get(slot.host_id) is not None:
                return slot
            log.info("pool %s: dropping %s, its env host %s is not live", env_id, slot.slot_id, slot.host_id)
        return None

    def put_back(self, slot: PoolSlot) -> None:
        """Return a slot taken for a create that was refused before claiming it."""
        self._warm.setdefault(slot.env_id, []).insert(0, slot)

    async def claim(self, slot: PoolSlot, session_id: str,
                    options: SessionOptions) -> environment_pb2.SpecResponse | None:
        """Give `slot`'s instance to the session made with `options` (see `takes_pooled`); its
        spec, or None when the claim failed (logged: the caller starts an instance the usual way)."""
        request = control_pb2.ClaimInstanceRequest(pool_slot=slot.slot_id, session_id=session_id, options=options)
        try:
            reply = await self.envhosts.claim(slot.host_id, request)
        except UnavailableError as exc:
            log.warning("session %s (%s): claiming %s failed: %s", session_id, slot.env_id, slot.slot_id, exc)
            self._spawn(self._stop_slot(slot, f"claim failed: {exc}"))
            return None
        if reply.error.code:
            log.info("session %s (%s): claiming %s failed: %s: %s", session_id, slot.env_id, slot.slot_id,
                     reply.error.code, reply.error.message)
            return None
        return reply.spec

    async def check_once(self) -> None:
        """Drop warm instances that are gone, and start one missing instance, if none is starting.

        One process start at a time, so that filling many pools on a small machine does not
        crowd out the sessions users start meanwhile; the emptiest pool (the smallest share of
        its target warm) comes first, so every environment soon has one.
        """
        for env_id in self.targets:
            self._prune(env_id)
        if any(self._starting.values()):
            return
        now = self._clock()
        wanting = [env_id for env_id, target in self.targets.items()
                   if len(self._warm[env_id]) < target and now >= self._retry_at[env_id]]
        if not wanting:
            return
        env_id = min(wanting, key=lambda e: len(self._warm[e]) / self.targets[e])
        self._starting[env_id] += 1
        self._spawn(self._start_one(env_id))

    async def _run(self) -> None:
        while True:
            try:
                await self.check_once()
            except Exception:
                if cancel_requested():
                    raise asyncio.CancelledError from None
                log.exception("pool check failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.check_interval)
            self._wake.clear()

    def _prune(self, env_id: str) -> None:
        kept = []
        for slot in self._warm[env_id]:
            host = self.hosts.get(slot.host_id)
            if host is None:
                log.info("pool %s: dropping %s, its env host %s is not live", env_id, slot.slot_id, slot.host_id)
                continue
            listed = any(i.session_id == slot.slot_id and i.alive for i in host.heartbeat.instances)
            if not listed and host.seen_at - slot.ready_at > HEARTBEAT_GRACE_S:
                log.info("pool %s: dropping %s, no longer running on env host %s", env_id, slot.slot_id,
                         slot.host_id)
                continue
            kept.append(slot)
        self._warm[env_id] = kept

    async def _start_one(self, env_id: str) -> None:
        try:
            slot = await self._launch(env_id)
        finally:
            self._starting[env_id] -= 1
            self._wake.set()  # the next missing one
        if slot is None:
            self._failures[env_id] += 1
            delay = RETRY_DELAYS_S[min(self._failures[env_id], len(RETRY_DELAYS_S)) - 1]
            self._retry_at[env_id] = self._clock() + delay
            return
        self._failures[env_id] = 0
        self._warm[env_id].append(slot)
        log.info("pool %s: %s warm on env host %s (%d/%d)", env_id, slot.slot_id, slot.host_id,
                 len(self._warm[env_id]), self.targets[env_id])

    async def _launch(self, env_id: str) -> PoolSlot | None:
        entry = self.catalog.get(env_id)
        host = self.hosts.pick(entry.gpus) if entry is not None else None
        if entry is None or host is None:
            if entry is not None and self._failures[env_id] == 0:
                log.info("pool %s: no env host with free capacity; trying again later", env_id)
            return None
        slot_id = pool_slot_id(env_id)
        self.hosts.note_placed(host.host_id, slot_id)
        request = control_pb2.StartInstanceRequest(session_id=slot_id, entry=entry,
                                                   options=pool_options(env_id), pooled=True)
        try:
            reply = await self.envhosts.start(host.host_id, request)
        except UnavailableError as exc:
            log.warning("pool %s: starting %s failed: %s", env_id, request.session_id, exc)
            self._spawn(self._stop_slot(PoolSlot(request.session_id, env_id, host.host_id, 0.0), str(exc)))
            return None
        if reply.error.code:
            log.warning("pool %s: starting %s on env host %s failed: %s: %s", env_id, request.session_id,
                        host.host_id, reply.error.code, reply.error.message)
            return None
        return PoolSlot(request.session_id, env_id, host.host_id, self._clock())

    async def _stop_slot(self, slot: PoolSlot, reason: str) -> None:
        with contextlib.suppress(UnavailableError):
            await self.envhosts.stop(slot.host_id, slot.slot_id, reason)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
