"""A create's world-change timeline checked against its catalog entry's `world` facts, before
anything starts, and handed on parsed.

The timeline is `SessionOptions.world_changes` (the user's `world_changes` kwarg, lifted out by
the gateway: `platform_contracts.session_kwargs`); its kinds and fields are
`platform_contracts.world_changes`' (a pure-Python module: no numpy or MuJoCo comes with it); the
facts are the entry's `world` table (CatalogEntry.world_json). An entry without facts gets the
form checked only (kinds, fields, ranges); the environment server checks names and indices
again against the live environment. Each checked entry gets its parsed `at`, `change` and
`reveal` filled in, so what the broker stores and hands on says what it checked.
"""

from __future__ import annotations

import json
from typing import Any

from platform_contracts.session_kwargs import WORLD_CHANGES
from platform_contracts.world_changes import WorldChange, WorldChangeError, WorldFacts, parse_timeline
from simulusion.control.v1 import control_pb2
from simulusion.session.v1.options_pb2 import SessionOptions

from platform_broker.errors import InvalidArgumentError

__all__ = ["check_timeline", "check_timeline_value"]


def check_timeline(entry: control_pb2.CatalogEntry, options: SessionOptions) -> None:
    """Check `options.world_changes` (when given) and fill in each entry's parsed fields, in place.

    Raises:
        InvalidArgumentError: with `field` "kwargs.world_changes[<i>].<field>" (or
            "kwargs.world_changes[<i>]" for a whole entry); the message names what is allowed.
    """
    if not options.HasField(WORLD_CHANGES):
        return
    changes = options.world_changes.changes
    entries: list[Any] = []
    for index, change in enumerate(changes):
        try:
            entries.append(json.loads(change.entry_json))
        except json.JSONDecodeError as exc:  # only a client that built the message itself
            path = f"{WORLD_CHANGES}[{index}]"
            raise InvalidArgumentError(f"kwargs.{path} of '{entry.id}': not valid JSON: {exc}",
                                       field=f"kwargs.{path}") from None
    for change, checked in zip(changes, check_timeline_value(entry, entries), strict=True):
        change.at, change.change, change.reveal = checked.at, checked.change, checked.reveal


def check_timeline_value(entry: control_pb2.CatalogEntry, value: Any) -> tuple[WorldChange, ...]:
    """A timeline given as JSON values, checked against the entry's facts (a `world_changes`
    kwarg that is not a list stays in the kwargs, and is refused here).

    Raises:
        InvalidArgumentError: as `check_timeline`; "kwargs.world_changes" for the whole value.
    """
    facts = WorldFacts.from_json(entry.world_json)  # checked when the catalog was loaded
    try:
        return parse_timeline(value, facts)
    except WorldChangeError as exc:
        raise InvalidArgumentError(f"kwargs.{exc.path} of '{entry.id}': {exc.problem}",
                                   field=f"kwargs.{exc.path}") from None
