"""A create's `SessionOptions`, checked and completed once, before anything is placed or stored.

The completed options are the session's for good: stored whole in the session table, shown by
`GET /v0/sessions/{id}`, and handed whole to the env host and on to the recorder.
"""

from __future__ import annotations

import json
from typing import Any

from platform_contracts.session_kwargs import lift
from platform_contracts.limits import MAX_JPEG_QUALITY, MAX_NUM_ENVS, MIN_JPEG_QUALITY
from simulusion.session.v1.options_pb2 import SessionOptions

from platform_broker.errors import InvalidArgumentError
from platform_broker.lives import check_life


def checked_options(options: SessionOptions) -> tuple[SessionOptions, dict[str, Any]]:
    """The options checked, as a new message completed so that each says what the session does:
    `kwargs_json` a canonical JSON object without the platform's own kwargs (in their typed
    fields, `platform_contracts.session_kwargs`), `num_envs` at least 1, `record_frames` on when
    a life's frames are thinned; and its kwargs, decoded (this is the one place the broker
    decodes them), for `kwargs_check`.

    The gateway lifts the platform's own kwargs out before they get here; those still in
    `kwargs_json` (a client of an older gateway) are lifted here the same way.

    Raises:
        InvalidArgumentError: kwargs that are not a JSON object, a JPEG quality or a number of
            environments out of range, record_frames or durable without record, or bad life settings.
    """
    completed = SessionOptions()
    completed.CopyFrom(options)
    kwargs = session_kwargs(options)
    lift(kwargs, completed)
    completed.kwargs_json = json.dumps(kwargs)
    if options.jpeg_quality > MAX_JPEG_QUALITY:
        raise InvalidArgumentError(f"jpeg_quality must be between {MIN_JPEG_QUALITY} and {MAX_JPEG_QUALITY} "
                                   f"(0 for the default), not {options.jpeg_quality}", field="jpeg_quality")
    if options.num_envs > MAX_NUM_ENVS:
        raise InvalidArgumentError(f"num_envs must be between 1 and {MAX_NUM_ENVS} (0 for 1), not {options.num_envs}",
                                   field="num_envs")
    completed.num_envs = max(1, options.num_envs)
    if options.durable and not options.record:
        raise InvalidArgumentError("durable stores every step's event before answering it: it needs record=true",
                                   field="durable")
    if options.record_frames and not options.record:
        raise InvalidArgumentError("record_frames keeps frames in the recording: it needs record=true",
                                   field="record_frames")
    check_life(completed)
    if options.frame_every or options.max_frames:
        completed.record_frames = True
    return completed, kwargs


def session_kwargs(options: SessionOptions) -> dict[str, Any]:
    """The session's own keyword arguments ({} when none).

    Raises:
        InvalidArgumentError: they are not valid JSON, or not a JSON object.
    """
    text = options.kwargs_json
    if not text.strip():
        return {}
    try:
        kwargs = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidArgumentError(f"kwargs for '{options.env_id}' are not valid JSON: {exc}", field="kwargs") from None
    if not isinstance(kwargs, dict):
        raise InvalidArgumentError(f"kwargs for '{options.env_id}' must be a JSON object, got {type(kwargs).__name__}",
                                   field="kwargs")
    return kwargs
