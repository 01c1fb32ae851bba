"""The OpenAPI document's bounds, exact.

FastAPI's OpenAPI models type `minimum`, `maximum` and their exclusive forms as floats, so every
bound of the document comes out as a float: `le=2**32 - 1` as 4294967295.0, and a seed's
`lt=2**63` as 9.223372036854776e+18, which a client reads as a rounded, smaller number than the
server takes. An integer field's bounds are integers again here (each float FastAPI wrote holds
the exact integer the field was given: these bounds are powers of two or small).
"""

from __future__ import annotations

from typing import Any

_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


def exact_integer_bounds(document: dict[str, Any]) -> dict[str, Any]:
    """`document` with the bounds of its integer schemas as integers (changed in place)."""
    _visit(document)
    return document


def _visit(node: Any) -> None:
    if isinstance(node, dict):
        if node.get("type") == "integer":
            for key in _BOUNDS:
                value = node.get(key)
                if type(value) is float and value.is_integer():
                    node[key] = int(value)
        for value in node.values():
            _visit(value)
    elif isinstance(node, list):
        for value in node:
            _visit(value)
