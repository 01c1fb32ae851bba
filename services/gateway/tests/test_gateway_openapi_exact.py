"""The OpenAPI document says exactly what the server takes (issue 29): integer bounds as exact
integers (FastAPI wrote them as floats: a seed's bound of 2**63 as 9.223372036854776e+18), and an
integer field takes any JSON number with a zero fraction (473.0), as JSON Schema's `integer` does,
while a fraction, a bool or a string is still refused."""

from __future__ import annotations

from typing import Any

import pytest
from platform_gateway.app import api_app
from platform_gateway.schemas.sessions import ResetBody, SessionCreate
from platform_gateway.schemas.teams import TeamCreate, TeamUpdate
from pydantic import ValidationError

DOCUMENT = api_app(auth_required=False).openapi()


def _integer_schemas(node: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        if node.get("type") == "integer":
            found.append(node)
        for value in node.values():
            found.extend(_integer_schemas(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_integer_schemas(value))
    return found


def test_integer_bounds_are_exact_integers() -> None:
    schemas = _integer_schemas(DOCUMENT)
    bounds = [schema[key] for schema in schemas
              for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum") if key in schema]
    assert bounds and all(type(bound) is int for bound in bounds)
    seed = DOCUMENT["components"]["schemas"]["ResetBody"]["properties"]["seed"]["anyOf"][0]
    assert seed["exclusiveMaximum"] == 2**63 and seed["minimum"] == 0
    frame_every = DOCUMENT["components"]["schemas"]["SessionCreate"]["properties"]["frame_every"]["anyOf"][0]
    assert frame_every["maximum"] == 2**32 - 1


def test_an_integral_float_is_an_integer() -> None:
    assert TeamCreate.model_validate({"name": "acme", "max_sessions": 473.0}).max_sessions == 473
    assert TeamUpdate.model_validate({"max_sessions": 2.0}).max_sessions == 2
    assert ResetBody.model_validate({"seed": 3.0}).seed == 3
    created = SessionCreate.model_validate({"env_id": "cartpole", "num_envs": 4.0, "jpeg_quality": 80.0})
    assert (created.num_envs, created.jpeg_quality) == (4, 80)


@pytest.mark.parametrize("value", [473.5, True, "473", float("inf")])
def test_a_fraction_a_bool_or_a_string_is_still_refused(value: Any) -> None:
    with pytest.raises(ValidationError):
        TeamCreate.model_validate({"name": "acme", "max_sessions": value})


def test_usage_days_are_dates_in_the_document() -> None:
    parameters = {p["name"]: p["schema"] for p in DOCUMENT["paths"]["/v0/usage"]["get"]["parameters"]}
    for name in ("since", "until"):
        assert parameters[name]["format"] == "date", parameters[name]  # the string branch's: null has none
