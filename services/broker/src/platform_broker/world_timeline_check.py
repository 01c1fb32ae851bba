"""A create's `world_changes` kwarg checked against its catalog entry's `world` facts, before
anything starts.

The timeline's kinds and fields are `platform_contracts.world_changes`' (a pure-Python module: no
numpy or MuJoCo comes with it); the facts are the entry's `world` table (CatalogEntry.world_json).
An entry without facts gets the form checked only (kinds, fields, ranges); the environment
server checks names and indices again against the live environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from platform_contracts.world_changes import TIMELINE_KWARG, WorldChangeError, WorldFacts, parse_timeline
from simulusion.control.v1 import control_pb2

from platform_broker.errors import InvalidArgumentError

__all__ = ["TIMELINE_KWARG", "check_world_changes"]


def check_world_changes(entry: control_pb2.CatalogEntry, kwargs: Mapping[str, Any]) -> None:
    """Raise for the first entry of `kwargs["world_changes"]` the environment cannot take.

    Raises:
        InvalidArgumentError: with `field` "kwargs.world_changes[<i>].<field>" (or
            "kwargs.world_changes" for the whole list); the message names what is allowed.
    """
    if TIMELINE_KWARG not in kwargs:
        return
    facts = WorldFacts.from_json(entry.world_json)  # checked when the catalog was loaded
    try:
        parse_timeline(kwargs[TIMELINE_KWARG], facts)
    except WorldChangeError as exc:
        raise InvalidArgumentError(f"kwargs.{exc.path} of '{entry.id}': {exc.problem}",
                                   field=f"kwargs.{exc.path}") from None
