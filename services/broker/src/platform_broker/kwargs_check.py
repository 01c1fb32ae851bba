"""A create's kwargs checked against the options its catalog entry declares, before anything starts.

A declared option's value is checked (type, range, choices; see `platform_broker.option_values`);
a kwarg the entry does not declare is refused, naming the ones it does: kwargs reach the
environment's constructor, and an undeclared one could reach into the env host (`xml_file` on a
Gymnasium MuJoCo task opens any path, and its error tells a file that exists from one that does
not). An entry whose catalog file sets `free_kwargs = true` (a user's own factory may want any)
takes undeclared kwargs unchecked: the operator opted in. An undeclared kwarg whose value is the
entry's own (its catalog `kwargs`, e.g. a Menagerie entry's `robot`) passes: it changes nothing,
and a saved snapshot's kwargs, which `platform_sdk.resume` and the comparisons start a session
with, are the instance's, the entry's included. The platform's own kwargs (`platform_contracts.session_kwargs`) are in the options' typed
fields by now; one still in the kwargs has a value of another type than its field's, and is
refused here as any kwarg is (`endless` is a declared option of every entry). The world-change
timeline is never an option: `world_timeline_check` checks it. `wad` and `doom_map` are Doom's
(the env host copies the WAD and checks the map): on another entry without free kwargs they are
refused as any undeclared kwarg is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from platform_contracts.session_kwargs import DOOM_MAP, RESERVED_KWARGS, WAD, WORLD_CHANGES
from simulusion.control.v1 import control_pb2
from simulusion.session.v1.options_pb2 import SessionOptions

from platform_broker.errors import InvalidArgumentError
from platform_broker.option_values import allowed, shown, value_fits
from platform_broker.world_timeline_check import check_timeline, check_timeline_value

# The factories of the Doom entries, which take `wad` and `doom_map` (as the env host's session_wads).
DOOM_FACTORY_PREFIX = "platform_envs.doom:"


def check_kwargs(entry: control_pb2.CatalogEntry, kwargs: Mapping[str, Any],
                 options: SessionOptions | None = None) -> None:
    """Raise for the first kwarg the entry does not take (undeclared, or a value its option does
    not allow), then for a bad world-change
    timeline (`world_timeline_check`): a `world_changes` left in `kwargs` (not a list), then
    `options.world_changes`, whose entries get their parsed fields filled in.

    Args:
        kwargs: the session's kwargs, without the platform's own (`session_options.checked_options`).
        options: the session's checked options (None: the kwargs only).

    Raises:
        InvalidArgumentError: with `field` "kwargs.<name>"; for a kwarg the entry does not declare
            (and no free_kwargs) the message names the options it does; else it names the option, the
            value and what the option allows (for the timeline: "kwargs.world_changes[<i>].<field>").
    """
    options_of = {option.name: option for option in entry.options}
    fixed = _entry_kwargs(entry)
    if not entry.free_kwargs and not entry.factory.startswith(DOOM_FACTORY_PREFIX):
        for name in (WAD, DOOM_MAP):
            if name in kwargs or (options is not None and options.HasField(name)):
                raise _not_an_option(entry, name)
    for name, value in kwargs.items():
        option = options_of.get(name)
        if option is None and name not in RESERVED_KWARGS and not entry.free_kwargs and not (
                name in fixed and _same(value, fixed[name])):
            raise _not_an_option(entry, name)
        if option is None or name == WORLD_CHANGES or value_fits(option, value):
            continue
        about = f" ({option.help})" if option.help else ""
        raise InvalidArgumentError(
            f"kwargs.{name} of '{entry.id}' must be {allowed(option)}, not {shown(value)}{about}",
            field=f"kwargs.{name}",
        )
    if WORLD_CHANGES in kwargs:
        check_timeline_value(entry, kwargs[WORLD_CHANGES])
    if options is not None:
        check_timeline(entry, options)


def _entry_kwargs(entry: control_pb2.CatalogEntry) -> dict[str, Any]:
    """The entry's own kwargs (the catalog parser wrote them: a JSON object)."""
    kwargs = json.loads(entry.kwargs_json) if entry.kwargs_json else {}
    return kwargs if isinstance(kwargs, dict) else {}


def _same(value: Any, fixed: Any) -> bool:
    """Whether a session's kwarg is the entry's own value, as JSON (1 is not 1.0 nor true)."""
    return json.dumps(value, sort_keys=True) == json.dumps(fixed, sort_keys=True)


def _not_an_option(entry: control_pb2.CatalogEntry, name: str) -> InvalidArgumentError:
    return InvalidArgumentError(
        f"kwargs.{name} is not an option of '{entry.id}': it takes {declared(entry)} "
        "(a catalog.toml entry takes other kwargs with free_kwargs = true)",
        field=f"kwargs.{name}",
    )


def declared(entry: control_pb2.CatalogEntry) -> str:
    """The options an entry declares, for a message: "frameskip, mode, endless" ("no options")."""
    names = [option.name for option in entry.options]
    return ", ".join(names) if names else "no options"
