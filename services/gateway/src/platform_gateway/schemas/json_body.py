"""`JsonBody`: the base of the API's strict request bodies.

A strict body takes a value of only the JSON type its schema names (`"seed": false` and
`"record": 1` are 422s, as the document promises). JSON Schema's `integer`, though, is any number
with a zero fractional part: `473.0` is an integer to a client generated from the document, so
such a float given for an integer field is taken as that integer (a fraction, a bool or a string
is still refused).
"""

from __future__ import annotations

import types
import typing
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator


class JsonBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    @model_validator(mode="before")
    @classmethod
    def _integral_floats_are_integers(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        integers = _integer_fields(cls)
        if not integers:
            return data
        return {name: int(value) if name in integers and type(value) is float and value.is_integer() else value
                for name, value in data.items()}


@cache
def _integer_fields(model: type[BaseModel]) -> frozenset[str]:
    """The fields of `model` (by name and alias) whose type is int, or int or None."""
    found: set[str] = set()
    for name, field in model.model_fields.items():
        annotation = field.annotation
        options = typing.get_args(annotation) if isinstance(annotation, types.UnionType) or \
            typing.get_origin(annotation) is typing.Union else (annotation,)
        if int in options:
            found.add(name)
            if field.alias:
                found.add(field.alias)
    return frozenset(found)
