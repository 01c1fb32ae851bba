"""A literal path's 405 lists its own methods (`literal_paths`), not a templated sibling's."""

from __future__ import annotations

from fastapi.testclient import TestClient
from platform_gateway.app import api_app


def test_a_method_a_literal_path_lacks_is_a_405_with_its_own_allow() -> None:
    with TestClient(api_app(False)) as client:
        refused = client.put("/v0/machines/ssh-key")
        assert refused.status_code == 405 and refused.headers["allow"] == "GET"
        assert refused.json()["detail"] == "PUT is not allowed on /v0/machines/ssh-key: use GET"
        behind_nat = client.delete("/v0/machines/behind-nat")
        assert behind_nat.status_code == 405 and behind_nat.headers["allow"] == "POST"
