"""Connecting a service to NATS: fail fast at start with one line, then reconnect for ever.

At start a service tries the server twice (a few seconds at most): NATS that cannot be reached
then is a setting to fix or a platform not started, said in one line naming the URL. Once
connected, the client reconnects without end (every half second), so a service rides out a
NATS restart; its subscriptions are made again by the client. The connection's trouble is
logged as one line per outage, not one per failed attempt.

Credentials: a server with users (managed mode: `platform_bus.permissions`, one user per
service) is given `PLATFORM_NATS_USER` and `PLATFORM_NATS_PASSWORD` from the service's
environment; unset, none are sent (self-hosted mode: the launcher's server has no users). The
password is never logged: neither it nor a URL's user and password appear in any message here.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import nats
import nats.errors
from nats.aio.client import Client

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 2.0  # one attempt at a server
RECONNECT_WAIT_S = 0.5  # between two attempts at the same server
START_TIMEOUT_S = 5.0  # the whole connect at start
_START_RECONNECTS = 1  # at start: one attempt and one retry
_FOREVER = -1
USER_SETTING = "PLATFORM_NATS_USER"
PASSWORD_SETTING = "PLATFORM_NATS_PASSWORD"


class NatsUnreachableError(Exception):
    """NATS could not be reached at start; the message is one line naming the URL."""


@dataclass(frozen=True)
class NatsCredentials:
    """A NATS user and its password (the password is left out of the repr)."""

    user: str
    password: str = field(repr=False)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> NatsCredentials | None:
        """`PLATFORM_NATS_USER` and `PLATFORM_NATS_PASSWORD` of `environ` (default os.environ);
        None when no user is set.

        Raises:
            NatsUnreachableError: a user without a password, or a password without a user.
        """
        env = os.environ if environ is None else environ
        user, password = env.get(USER_SETTING, ""), env.get(PASSWORD_SETTING, "")
        if not user and not password:
            return None
        if not user or not password:
            given, missing = (USER_SETTING, PASSWORD_SETTING) if user else (PASSWORD_SETTING, USER_SETTING)
            raise NatsUnreachableError(f"{given} is set but {missing} is not: set both or neither")
        return cls(user, password)


def redacted(url: str) -> str:
    """`url` without the user and password it may carry (`nats://***@host:4222`)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url.rpartition("@")[2]
    if "@" not in parts.netloc:
        return url
    return parts._replace(netloc="***@" + parts.netloc.rpartition("@")[2]).geturl()


class _ConnectionLog:
    """nats-py's callbacks: quiet until connected (the start failure is one line of its own),
    then one warning per outage and one line when connected again."""

    def __init__(self, where: str, logger: logging.Logger) -> None:
        self.where = where
        self.log = logger
        self.connected = False
        self.away = False
        self.client: Client | None = None
        self.last_error = ""

    async def on_error(self, exc: Exception) -> None:
        self.last_error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        if self.connected and not self.away:
            self.log.warning("NATS at %s: %s", self.where, self.last_error)

    async def on_disconnected(self) -> None:
        client = self.client
        if not self.connected or client is None or client.is_closed or client.is_draining:
            return
        if not self.away:
            self.away = True
            self.log.warning("NATS: disconnected from %s; reconnecting", self.where)

    async def on_reconnected(self) -> None:
        self.away = False
        self.log.info("NATS: reconnected to %s", self.where)


async def connect(servers: str | Sequence[str], *, name: str, timeout: float = START_TIMEOUT_S,
                  logger: logging.Logger | None = None, credentials: NatsCredentials | None = None) -> Client:
    """A connected NATS client that reconnects for ever once connected.

    Args:
        servers: the NATS URL, or several (a cluster): a list, or one string with commas.
        name: the client's name on the server (`platform-gateway`, `envhost-<id>`, ...).
        timeout: seconds the connect at start may take in all.
        logger: where the connection's later trouble is logged (default: this module's).
        credentials: the user to connect as; None: `NatsCredentials.from_env()` (none when
            `PLATFORM_NATS_USER` is unset).

    Raises:
        NatsUnreachableError: no server answered within `timeout`, the server refused the
            credentials (or their absence), or the credential settings are incomplete.
    """
    urls = [url.strip() for url in (servers.split(",") if isinstance(servers, str) else servers) if url.strip()]
    where = ", ".join(redacted(url) for url in urls)
    if credentials is None:
        try:
            credentials = NatsCredentials.from_env()
        except NatsUnreachableError as exc:
            raise NatsUnreachableError(f"cannot connect to NATS at {where}: {exc}") from None
    watch = _ConnectionLog(where, logger or log)
    try:
        client = await asyncio.wait_for(nats.connect(
            servers=urls, name=name, connect_timeout=min(CONNECT_TIMEOUT_S, timeout),
            max_reconnect_attempts=_START_RECONNECTS, reconnect_time_wait=RECONNECT_WAIT_S,
            error_cb=watch.on_error, disconnected_cb=watch.on_disconnected,
            reconnected_cb=watch.on_reconnected,
            user=credentials.user if credentials else None, password=credentials.password if credentials else None,
        ), timeout)
    except (TimeoutError, OSError, nats.errors.Error) as exc:
        why = watch.last_error or (f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
        who = (f"as user {credentials.user!r}" if credentials else "with the URL's user" if "***@" in where
               else f"without credentials ({USER_SETTING} unset)")
        if "authorization" in why.lower():
            why += f"; connecting {who}"
        raise NatsUnreachableError(f"cannot connect to NATS at {where} within {timeout:g} s ({why})") from None
    watch.client = client
    watch.connected = True
    client.options["max_reconnect_attempts"] = _FOREVER  # running: never give up on the server
    return client


async def flush_queued(nc: Client) -> None:
    """Return once the server has read everything queued on `nc` so far: subscriptions,
    unsubscriptions, publishes. Call it before a service says it serves, or before another
    connection publishes to what it just subscribed to.

    `nc.flush()` alone is not enough: nats-py writes a flush's PING straight to the socket, ahead
    of the commands still queued for its flusher task, so the PONG can come back before the
    server has read them (a request from another connection then gets "no responders"). By the
    time that PONG is back the flusher has written them, so a second PING follows them.
    """
    await nc.flush()
    await nc.flush()
