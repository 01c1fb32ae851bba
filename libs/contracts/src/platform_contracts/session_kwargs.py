"""The platform's own session kwargs: the one place their names are spelled.

A user writes them in a session's `kwargs` like any other (POST /v0/sessions, `connect(kwargs=...)`,
`platform-agent --kwargs`)::

    world_changes  the world-change timeline (`platform_contracts.world_changes`)
    endless        no time limit; an episode that ends restarts in place
    wad, doom_map  an uploaded WAD's id and the map of it to play (Doom entries)

They are the platform's, not the environment's, so they travel as typed fields of
`SessionOptions` of the same names: the gateway lifts them out of the user's kwargs once
(`lift`), the broker checks them (the timeline against the catalog entry's `world` facts, filling
in each entry's parsed at/change/reveal), and the env host, the instance's launch and the recorder
read the fields. What shows a session's kwargs (`GET /v0/sessions/{id}`) puts them back
(`reserved_kwargs`), so the user sees what they sent.

The instance is the exception: `python -m platform_sdk --kwargs` still gets them inside its
kwargs (`merged_kwargs`), because a Docker image runs the SDK it was built with, and older ones
look for them there.

A value of another JSON type than its field's (`"endless": "yes"`, `"world_changes": 3`) is not
lifted: it stays in the kwargs, where the broker refuses it with the message it gives any kwarg
(`endless` is a declared option of every entry; the timeline must be a list) or, for `wad` and
`doom_map`, the env host does when the environment is Doom's.

This module imports nothing beyond the standard library at run time (the message is only typed).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, MutableMapping
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from simulusion.session.v1.options_pb2 import SessionOptions

__all__ = [
    "DOOM_MAP",
    "ENDLESS",
    "RESERVED_KWARGS",
    "WAD",
    "WORLD_CHANGES",
    "lift",
    "merged_kwargs",
    "reserved_kwargs",
    "timeline_entries",
]

# Each is the name of its SessionOptions field too (Final: a literal type, as HasField wants).
WORLD_CHANGES: Final = "world_changes"
ENDLESS: Final = "endless"
WAD: Final = "wad"
DOOM_MAP: Final = "doom_map"
RESERVED_KWARGS = (WORLD_CHANGES, ENDLESS, WAD, DOOM_MAP)


def lift(kwargs: MutableMapping[str, Any], options: SessionOptions) -> None:
    """Move each reserved kwarg of `kwargs` whose value has its field's JSON type (a list for
    world_changes, true/false for endless, a string for wad and doom_map) into that field of
    `options`, in place: the kwargs keep only the environment's own (and reserved ones of
    another type, for the broker or the env host to refuse). A field already set is replaced."""
    timeline = kwargs.get(WORLD_CHANGES)
    if isinstance(timeline, list):
        del kwargs[WORLD_CHANGES]
        options.world_changes.Clear()
        options.world_changes.SetInParent()  # given, even when empty
        for entry in timeline:
            options.world_changes.changes.add(entry_json=json.dumps(entry))
    endless, wad, doom_map = kwargs.get(ENDLESS), kwargs.get(WAD), kwargs.get(DOOM_MAP)
    if isinstance(endless, bool):
        del kwargs[ENDLESS]
        options.endless = endless
    if isinstance(wad, str):
        del kwargs[WAD]
        options.wad = wad
    if isinstance(doom_map, str):
        del kwargs[DOOM_MAP]
        options.doom_map = doom_map


def timeline_entries(options: SessionOptions) -> list[Any]:
    """The timeline's entries as the user wrote them (JSON values), [] when none was given.

    Raises:
        ValueError: an entry is not valid JSON (only a message not made by `lift` can hold one).
    """
    return [json.loads(change.entry_json) for change in options.world_changes.changes]


def reserved_kwargs(options: SessionOptions) -> dict[str, Any]:
    """The reserved kwargs `options` holds, as the user wrote them (JSON values), in
    RESERVED_KWARGS order; those not given are left out."""
    given: dict[str, Any] = {}
    if options.HasField(WORLD_CHANGES):
        given[WORLD_CHANGES] = timeline_entries(options)
    if options.HasField(ENDLESS):
        given[ENDLESS] = options.endless
    if options.HasField(WAD):
        given[WAD] = options.wad
    if options.HasField(DOOM_MAP):
        given[DOOM_MAP] = options.doom_map
    return given


def merged_kwargs(kwargs: Mapping[str, Any], options: SessionOptions) -> dict[str, Any]:
    """`kwargs` with the reserved kwargs of `options` over them: the form the instance is given
    (`python -m platform_sdk --kwargs`), which images built with an older SDK still read."""
    return {**kwargs, **reserved_kwargs(options)}
