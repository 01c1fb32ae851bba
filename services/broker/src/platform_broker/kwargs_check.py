"""A create's kwargs checked against the options its catalog entry declares, before anything starts.

Only declared options are checked (type, range, choices; see `platform_broker.option_values`);
a kwarg the entry does not declare passes through untouched, for the environment to judge.
The platform's `world_changes` timeline is never an option: `world_timeline_check` checks it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simulusion.control.v1 import control_pb2

from platform_broker.errors import InvalidArgumentError
from platform_broker.option_values import allowed, shown, value_fits
from platform_broker.world_timeline_check import TIMELINE_KWARG, check_world_changes


def check_kwargs(entry: control_pb2.CatalogEntry, kwargs: Mapping[str, Any]) -> None:
    """Raise for the first kwarg a declared option does not allow, then for a bad world-change
    timeline (`world_timeline_check`).

    Raises:
        InvalidArgumentError: with `field` "kwargs.<name>"; the message names the option, the
            value and what the option allows (for the timeline: "kwargs.world_changes[<i>].<field>").
    """
    options = {option.name: option for option in entry.options}
    for name, value in kwargs.items():
        option = options.get(name)
        if option is None or name == TIMELINE_KWARG or value_fits(option, value):
            continue
        about = f" ({option.help})" if option.help else ""
        raise InvalidArgumentError(
            f"kwargs.{name} of '{entry.id}' must be {allowed(option)}, not {shown(value)}{about}",
            field=f"kwargs.{name}",
        )
    check_world_changes(entry, kwargs)
