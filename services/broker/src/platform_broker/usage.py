"""Instance-hours from the session table, and the teams' quotas checked on create.

A session counts from its `created_at` to its `ended_at` (or now, while it is open), times its
sub-environments (`num_envs`: one instance hosting n environments counts n), split at UTC
midnights. Each session is one row, ended once (`store.SessionStore.mark_closed` /
`mark_crashed` set `ended_at` in the UPDATE that ends it), so a broker restart or a killed
instance loses nothing and counts nothing twice: an open session whose env host is gone is
ended by the crash handling (`lost_hosts`, `reconcile`), and counts until then.

Quotas (`platform_database.teams`, written by the gateway's `/v0/teams`) are read once per
create (one primary-key read):

- `instance_hours_per_month`: a create is refused once the team's instance-hours of the
  current UTC month (open sessions counted until now) reach it. Checked on create only: the
  sessions already open run on, and a few creates at the same moment may all pass just under it.
- `max_sessions`: a create is refused when the team has that many open sessions; checked and
  inserted atomically (`SessionStore.insert_within`), so concurrent creates, even on
  several brokers, never go past it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from collections.abc import Iterable

from platform_contracts.teams import owning_team
from platform_database.teams import Team, TeamStore
from simulusion.control.v1 import control_pb2

from platform_broker.errors import InvalidArgumentError, ResourceExhaustedError
from platform_broker.store import SessionSpan, SessionStore

DAY_S = 86_400.0
HOUR_S = 3600.0
UTC = dt.timezone.utc
_DAY = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")


def parse_day(text: str, what: str) -> dt.date:
    """`text` as a date (YYYY-MM-DD).

    Raises:
        InvalidArgumentError: naming `what` and the format.
    """
    try:
        return dt.date.fromisoformat(text) if _DAY.match(text) else _bad_day(text, what)
    except ValueError:
        return _bad_day(text, what)


def _bad_day(text: str, what: str) -> dt.date:
    raise InvalidArgumentError(f"{what} must be a date YYYY-MM-DD (UTC), not {text!r}", field=what)


def day_start(day: dt.date) -> float:
    """Unix seconds of the UTC midnight that begins `day`."""
    return dt.datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()


def day_of(ts: float) -> dt.date:
    return dt.datetime.fromtimestamp(ts, UTC).date()


def month_start(ts: float) -> float:
    """Unix seconds of the first UTC midnight of the month `ts` is in."""
    day = day_of(ts)
    return day_start(day.replace(day=1))


def usage_rows(spans: Iterable[SessionSpan], since: float, until: float, now: float) -> list[control_pb2.UsageRow]:
    """Instance-hours per UTC day, team and env id of `spans` within [`since`, `until`), with
    the sessions that ran each day; by day, team, env id."""
    hours: dict[tuple[str, str, str], float] = defaultdict(float)
    counted: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for span in spans:
        start, end = max(span.created_at, since), min(span.end(now), until)
        if end < start or (end == start and span.created_at < since):
            continue
        for day, seconds in _split_at_midnights(start, end):
            key = (day.isoformat(), span.team, span.env_id)
            hours[key] += seconds * span.num_envs / HOUR_S
            counted[key].add(span.id)
    return [control_pb2.UsageRow(day=day, team=team, env_id=env_id, instance_hours=hours[(day, team, env_id)],
                                 sessions=len(counted[(day, team, env_id)]))
            for day, team, env_id in sorted(hours)]


def instance_hours(spans: Iterable[SessionSpan], since: float, until: float, now: float) -> float:
    """The instance-hours of `spans` within [`since`, `until`)."""
    total = 0.0
    for span in spans:
        start, end = max(span.created_at, since), min(span.end(now), until)
        if end > start:
            total += (end - start) * span.num_envs / HOUR_S
    return total


def _split_at_midnights(start: float, end: float) -> list[tuple[dt.date, float]]:
    """[start, end] as (UTC day, seconds in it); a session of no length is one day of 0 s."""
    parts = []
    day = day_of(start)
    while True:
        next_midnight = day_start(day + dt.timedelta(days=1))
        parts.append((day, min(end, next_midnight) - max(start, day_start(day))))
        if end <= next_midnight:
            return parts
        day += dt.timedelta(days=1)


class Usage:
    """The usage request (`platform.broker.usage`) and the quota checks of a create."""

    def __init__(self, store: SessionStore, teams: TeamStore) -> None:
        self.store = store
        self.teams = teams

    async def create_tables(self) -> None:
        """Make the teams table if the gateway has not yet (there is no quota until it has rows)."""
        await self.teams.create_tables()

    async def rows(self, request: control_pb2.UsageRequest, now: float) -> list[control_pb2.UsageRow]:
        """The request's rows: its team's (every team's when empty), from `since_day` (from the
        start when empty) to `until_day` (today when empty), both inclusive.

        Raises:
            InvalidArgumentError: a day that is not YYYY-MM-DD, or until before since.
        """
        until_day = parse_day(request.until_day, "until_day") if request.until_day else day_of(now)
        since = day_start(parse_day(request.since_day, "since_day")) if request.since_day else 0.0
        until = day_start(until_day + dt.timedelta(days=1))
        if until <= since:
            raise InvalidArgumentError(f"until_day {until_day.isoformat()} is before since_day {request.since_day}",
                                       field="until_day")
        spans = await self.store.spans(since, until, request.team or None)
        return usage_rows(spans, since, until, now)

    async def hours_this_month(self, team: str, now: float) -> float:
        """`team`'s instance-hours of the current UTC month, open sessions until `now`."""
        since = month_start(now)
        return instance_hours(await self.store.spans(since, now, team), since, now, now)

    async def quota(self, team: str, now: float) -> Team | None:
        """`team`'s row, after checking its instance-hours quota; None when it has no row.

        Raises:
            ResourceExhaustedError: its instance-hours this month reached its quota.
        """
        name = owning_team(team)
        row = await self.teams.get(name)
        if row is None or row.instance_hours_per_month is None:
            return row
        used = await self.hours_this_month(name, now)
        limit = row.instance_hours_per_month
        if used >= limit:
            raise ResourceExhaustedError(
                f"team {name!r} has used {used:.1f} of its {limit:g} instance-hours this month "
                f"(instance_hours_per_month={limit:g}): the month's usage renews on the 1st (UTC); "
                f"an admin can raise the quota (PATCH /v0/teams/{name})")
        return row


def sessions_quota_error(team: str, max_sessions: int) -> ResourceExhaustedError:
    name = owning_team(team)
    noun = "session" if max_sessions == 1 else "sessions"
    return ResourceExhaustedError(f"team {name!r} has reached its quota of {max_sessions} concurrent {noun} "
                                  f"(max_sessions={max_sessions}): close one first")
