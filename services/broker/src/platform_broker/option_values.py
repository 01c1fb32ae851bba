"""Whether a value fits one declared option of a catalog entry (`control_pb2.EnvOption`).

Types: "int" (a JSON integer, never true/false), "float" (any finite JSON number), "bool",
"string", "choice" (one of the option's `choices`, with its JSON type: 1 is not 1.0 nor true),
"list" (a list of distinct strings, each one of `choices` when the option has them; e.g. Doom's
`variables`).
`minimum`/`maximum` bound int and float options, both inclusive. null is allowed exactly when
the option's default is null (the environment's own setting).
"""

from __future__ import annotations

import json
import math
from typing import Any

from simulusion.control.v1 import control_pb2

OPTION_TYPES = ("int", "float", "bool", "string", "choice", "list")
SHOWN_CHOICES = 12  # a list option's names shown in a message, then how many more
NUMERIC_TYPES = ("int", "float")
SHOWN_CHARS = 60  # a value longer than this as JSON is cut in messages


def value_fits(option: control_pb2.EnvOption, value: Any) -> bool:
    """Whether `value` (a JSON value as Python) is one `option` allows."""
    if value is None:
        return option.default_json == "null"
    kind = option.type
    if kind == "choice":
        return _json(value) in option.choices_json
    if kind == "list":
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            return False
        names = [_json(item) for item in value]
        return len(set(names)) == len(names) and (not option.choices_json or set(names) <= set(option.choices_json))
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if isinstance(value, bool) or not isinstance(value, int if kind == "int" else (int, float)):
        return False
    if isinstance(value, float) and not math.isfinite(value):
        return False
    if option.HasField("minimum") and value < option.minimum:
        return False
    return not (option.HasField("maximum") and value > option.maximum)


def allowed(option: control_pb2.EnvOption) -> str:
    """What `option` allows, as the end of "must be ...": "an integer >= 1", "one of "fast", "full"",
    "true or false (or null for the environment's own)"."""
    kind = option.type
    if kind == "choice":
        text = "one of " + ", ".join(option.choices_json)
    elif kind == "list":
        names = [json.loads(c) for c in option.choices_json]
        more = f", ... ({len(names)} in all)" if len(names) > SHOWN_CHOICES else ""
        text = "a list of distinct strings" + (f", each one of {', '.join(names[:SHOWN_CHOICES])}{more}" if names else "")
    elif kind == "bool":
        text = "true or false"
    elif kind == "string":
        text = "a string"
    else:
        text = ("an integer" if kind == "int" else "a number") + _range(option)
    return text + (" (or null for the environment's own)" if option.default_json == "null" else "")


def shown(value: Any) -> str:
    """`value` as JSON for a message, cut to SHOWN_CHARS."""
    text = _json(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def number_text(number: float) -> str:
    """A bound as written: 1, not 1.0."""
    return str(int(number)) if float(number).is_integer() else repr(float(number))


def _range(option: control_pb2.EnvOption) -> str:
    low = option.minimum if option.HasField("minimum") else None
    high = option.maximum if option.HasField("maximum") else None
    if low is not None and high is not None:
        return f" from {number_text(low)} to {number_text(high)}"
    if low is not None:
        return f" >= {number_text(low)}"
    if high is not None:
        return f" <= {number_text(high)}"
    return ""


def _json(value: Any) -> str:
    return json.dumps(value, allow_nan=True)
