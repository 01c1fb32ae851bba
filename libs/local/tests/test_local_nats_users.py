"""PLATFORM_MODE=managed in the launcher: a NATS password per service, given to that service only,
and the server's config private; self-hosted mode gives none. (The rendered users and a real
managed platform: tests/test_e2e_managed_bus.py, where platform_bus is installed.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from platform_local import SERVICES, ConfigError, LocalPlatform
from platform_local.nats_process import write_config
from platform_local.services import PlatformLayout, service_env


def layout(tmp_path: Path, passwords: dict[str, str] | None = None) -> PlatformLayout:
    return PlatformLayout(tmp_path, tmp_path / "recordings", "nats://127.0.0.1:4999", "127.0.0.1", 8000,
                          nats_passwords=passwords or {})


def test_local_each_service_gets_its_own_nats_user_over_the_environment(tmp_path: Path) -> None:
    passwords = {name: f"pw-{name}" for name in SERVICES}
    base = {"PLATFORM_NATS_USER": "someone", "PLATFORM_NATS_PASSWORD": "theirs"}
    for name in SERVICES:
        env = service_env(name, layout(tmp_path, passwords), base, {"PLATFORM_NATS_USER": "extra"})
        assert (env["PLATFORM_NATS_USER"], env["PLATFORM_NATS_PASSWORD"]) == (name, f"pw-{name}")
        assert env["PLATFORM_NATS_URL"] == "nats://127.0.0.1:4999"  # no password in the URL
    assert "pw-" not in repr(layout(tmp_path, passwords))


def test_local_self_hosted_mode_adds_no_nats_user(tmp_path: Path) -> None:
    env = service_env("broker", layout(tmp_path), {"PATH": "/usr/bin"})
    assert "PLATFORM_NATS_USER" not in env and "PLATFORM_NATS_PASSWORD" not in env
    platform = LocalPlatform(tmp_path / "data", base_env={"PATH": "/usr/bin"})
    assert platform.mode == "self-hosted" and platform.nats_passwords == {}


def test_local_managed_mode_makes_a_password_per_service_unless_nats_is_external(tmp_path: Path) -> None:
    platform = LocalPlatform(tmp_path / "data", extra_env={"PLATFORM_MODE": "managed"}, base_env={})
    assert sorted(platform.nats_passwords) == sorted(SERVICES)
    assert len(set(platform.nats_passwords.values())) == len(SERVICES)
    assert all(len(p) >= 40 for p in platform.nats_passwords.values())
    again = LocalPlatform(tmp_path / "data", base_env={"PLATFORM_MODE": "managed"})
    assert set(again.nats_passwords.values()).isdisjoint(platform.nats_passwords.values())  # random per platform
    external = LocalPlatform(tmp_path / "data", nats_url="nats://nats.example:4222",
                             base_env={"PLATFORM_MODE": "managed", "PLATFORM_NATS_USER": "broker"})
    assert external.nats_passwords == {}  # the services' own settings, passed through
    assert service_env("broker", external._layout(), external.base_env)["PLATFORM_NATS_USER"] == "broker"


def test_local_unknown_mode_fails_before_starting(tmp_path: Path) -> None:
    platform = LocalPlatform(tmp_path / "data", base_env={"PLATFORM_MODE": "hosted"}, services=())
    with pytest.raises(ConfigError, match="PLATFORM_MODE='hosted' is not one of self-hosted, managed"):
        platform.start()
    assert platform.pids() == {}


def test_local_nats_config_holds_the_block_and_is_private(tmp_path: Path) -> None:
    plain = write_config(tmp_path / "plain")
    assert "authorization" not in plain.read_text()
    block = 'authorization {\n  users = [\n    {user: "broker", password: "pw"}\n  ]\n}\n'
    path = write_config(tmp_path / "managed", block)
    assert path.read_text().endswith(block) and "max_payload" in path.read_text()
    assert path.stat().st_mode & 0o777 == 0o600
