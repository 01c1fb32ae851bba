"""Names and labels follow `platform_contracts.names`: a life named `.` or `..`, a snapshot label
with a NUL or a right-to-left override, a WAD name that is not a plain file name are 422s that
say the rule, and the OpenAPI document carries the same patterns."""

from __future__ import annotations

import pytest
from platform_contracts import names


@pytest.mark.parametrize("life", [".", "..", ".hidden", "-x", "robot-1\n"])
async def test_a_life_name_that_would_be_a_hidden_or_dot_file_is_refused(gateway, life: str) -> None:
    response = await gateway.http.post("/v0/sessions", json={"env_id": "cartpole", "record": True, "life": life})
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["field"] == "life"
    assert f"{life!r} is not a life name: use {names.LIFE_NAME_RULE}" in body["detail"]


@pytest.mark.parametrize("label", ["a\x00b", "fine\u202eenif", "two\nlines", "x" * 201])
async def test_a_snapshot_label_with_controls_or_bidi_overrides_is_refused(gateway, label: str) -> None:
    response = await gateway.http.post("/v0/sessions/s-0123456789ab/saved-snapshots", json={"label": label})
    assert response.status_code == 422, response.text
    assert response.json()["field"] == "label"


async def test_the_document_has_the_rules_patterns(gateway) -> None:
    document = (await gateway.http.get("/openapi.json")).json()
    schemas = document["components"]["schemas"]
    life = schemas["SessionCreate"]["properties"]["life"]["anyOf"][0]
    assert life["pattern"] == names.LIFE_NAME_PATTERN
    labels = [prop for schema in schemas.values() for key, prop in schema.get("properties", {}).items()
              if key == "label" and "pattern" in prop]
    assert len(labels) == 2 and all(prop["pattern"] == names.LABEL_PATTERN for prop in labels)  # REST and stream
    upload = document["paths"]["/v0/doom/wads"]["post"]["parameters"]
    assert next(p for p in upload if p["name"] == "name")["schema"]["pattern"] == names.WAD_NAME_PATTERN
