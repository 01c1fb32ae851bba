"""PLATFORM_AUTH=token across the whole platform: the SDK opens sessions with an API token the
admin made, a missing or revoked token is refused, and no token is left in clear in the
database or the services' logs."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from platform_testing.platform import running_platform

import platform_sdk

ADMIN = "e2e-admin-token-0123456789"


def test_sessions_need_a_live_api_token_and_none_is_kept_in_clear(tmp_path: Path) -> None:
    env = {"PLATFORM_AUTH": "token", "PLATFORM_ADMIN_TOKEN": ADMIN}
    with running_platform(tmp_path / "platform", extra_env=env) as stack:
        admin = {"Authorization": f"Bearer {ADMIN}"}
        made = httpx.post(f"{stack.url}/v0/tokens", json={"name": "e2e"}, headers=admin, timeout=30)
        assert made.status_code == 201, made.text
        token = made.json()["token"]

        with platform_sdk.connect("cartpole", url=stack.url, token=token) as sim:
            sim.reset(seed=1)
            assert sim.step(0)[0].shape == (4,)

        with pytest.raises(platform_sdk.PlatformError, match="needs an API token") as missing:
            platform_sdk.connect("cartpole", url=stack.url)
        assert missing.value.status == 401
        revoked = httpx.delete(f"{stack.url}/v0/tokens/{made.json()['id']}", headers=admin, timeout=30)
        assert revoked.status_code == 200
        with pytest.raises(platform_sdk.PlatformError, match="was revoked"):
            platform_sdk.connect("cartpole", url=stack.url, token=token)

        wheel = httpx.get(f"{stack.url}/v0/wheels/platform-sdk", timeout=60)
        assert wheel.status_code == 401  # the served client wheel needs a token too

    data = tmp_path / "platform" / "data"
    kept = [path for path in data.rglob("*") if path.is_file() and path.suffix in (".db", ".log")]
    assert any(path.name == "platform.db" for path in kept), kept
    for path in kept:
        content = path.read_bytes()
        assert token.encode() not in content and ADMIN.encode() not in content, path
