"""The one mapping between a session's options in REST (`schemas.sessions.SessionBase`) and the
`SessionOptions` message that carries them to the broker, the env host and the recorder.

Each REST field is the message field of the same name, except `kwargs` (the message's
`kwargs_json`). A REST field whose default is null is the message's zero (0 or "") when null,
and null when zero; the others (`env_id`, the booleans) are copied as they are. So an option
added to both with the same name needs no change here (tests check that the two have the same
fields).

The platform's own kwargs (`world_changes`, `endless`, `wad`, `doom_map`:
`platform_contracts.session_kwargs`) are written by the user in `kwargs` and lifted here, once,
into the message's typed fields of the same names; a session's JSON shows them back in its
`kwargs`, as the user sent them.
"""

from __future__ import annotations

import json
from typing import Any

from platform_contracts.session_kwargs import RESERVED_KWARGS, WORLD_CHANGES, lift, reserved_kwargs
from simulusion.session.v1.options_pb2 import SessionOptions

from platform_gateway.schemas.sessions import SessionBase

# Message fields the platform sets, never the client: the owning team (the caller's), and that
# the gateway made the session for a preview (platform_gateway.previews).
SET_BY_THE_PLATFORM = frozenset({"team", "preview"})
# Message fields the user writes inside `kwargs`, not as REST fields of their own.
LIFTED_FROM_KWARGS = frozenset(RESERVED_KWARGS)
# The REST fields copied by name (all but kwargs); True for those that are null when not given.
_BY_NAME: dict[str, bool] = {
    name: field.default is None for name, field in SessionBase.model_fields.items() if name != "kwargs"
}


def options_from_body(body: SessionBase) -> SessionOptions:
    """The options of a `POST /v0/sessions` body as the message sent to the broker."""
    kwargs = dict(body.kwargs)
    options = SessionOptions()
    lift(kwargs, options)
    options.kwargs_json = json.dumps(kwargs)
    for name in _BY_NAME:
        value = getattr(body, name)
        if value is not None:
            setattr(options, name, value)
    return options


def options_to_json(options: SessionOptions) -> dict[str, Any]:
    """The options as the fields of a session's JSON (`GET /v0/sessions/{id}`): what the session
    was made with, as the broker completed it; its kwargs as the user sent them (the platform's
    own put back; a session stored by an older version has them in `kwargs_json` itself)."""
    try:
        own = reserved_kwargs(options)
    except ValueError:  # a timeline entry that is not JSON (the broker refuses those): shown, not raised
        own = {WORLD_CHANGES: {"_unparsed": [change.entry_json for change in options.world_changes.changes]}}
    fields: dict[str, Any] = {"kwargs": {**kwargs_from_json(options.kwargs_json), **own}}
    for name, nullable in _BY_NAME.items():
        value = getattr(options, name)
        fields[name] = None if nullable and not value else value
    return fields


def kwargs_from_json(kwargs_json: str) -> dict[str, Any]:
    """Keyword arguments kept as JSON, as a dict ({} when empty; an unreadable or non-object text
    is shown under `_unparsed` / `_value` rather than failing the view)."""
    try:
        value = json.loads(kwargs_json) if kwargs_json else {}
    except ValueError:
        return {"_unparsed": kwargs_json}
    return value if isinstance(value, dict) else {"_value": value}

