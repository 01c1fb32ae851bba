"""A create's kwargs checked against the options its catalog entry declares, before anything starts.

Only declared options are checked (type, range, choices; see `platform_broker.option_values`);
a kwarg the entry does not declare passes through untouched, for the environment to judge.
The platform's own kwargs (`platform_contracts.session_kwargs`) are in the options' typed
fields by now; one still in the kwargs has a value of another type than its field's, and is
refused here as any kwarg is (`endless` is a declared option of every entry). The world-change
timeline is never an option: `world_timeline_check` checks it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from platform_contracts.session_kwargs import WORLD_CHANGES
from simulusion.control.v1 import control_pb2
from simulusion.session.v1.options_pb2 import SessionOptions

from platform_broker.errors import InvalidArgumentError
from platform_broker.option_values import allowed, shown, value_fits
from platform_broker.world_timeline_check import check_timeline, check_timeline_value


def check_kwargs(entry: control_pb2.CatalogEntry, kwargs: Mapping[str, Any],
                 options: SessionOptions | None = None) -> None:
    """Raise for the first kwarg a declared option does not allow, then for a bad world-change
    timeline (`world_timeline_check`): a `world_changes` left in `kwargs` (not a list), then
    `options.world_changes`, whose entries get their parsed fields filled in.

    Args:
        kwargs: the session's kwargs, without the platform's own (`session_options.checked_options`).
        options: the session's checked options (None: the kwargs only).

    Raises:
        InvalidArgumentError: with `field` "kwargs.<name>"; the message names the option, the
            value and what the option allows (for the timeline: "kwargs.world_changes[<i>].<field>").
    """
    options_of = {option.name: option for option in entry.options}
    for name, value in kwargs.items():
        option = options_of.get(name)
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
