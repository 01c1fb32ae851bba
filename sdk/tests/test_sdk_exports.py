"""The SDK's public names are pinned: removing or renaming one is a breaking change."""

from __future__ import annotations

import inspect

import platform_sdk

PUBLIC = {
    "EnvironmentCrashedError",
    "InvalidActionError",
    "PlatformError",
    "PlatformUnavailableError",
    "RemoteEnv",
    "SessionClosedError",
    "SessionNotFoundError",
    "connect",
}


def test_public_exports_are_pinned():
    assert set(platform_sdk.__all__) == PUBLIC
    for name in PUBLIC:
        assert getattr(platform_sdk, name) is not None


def test_connect_signature_is_pinned():
    params = list(inspect.signature(platform_sdk.connect).parameters)
    assert params == ["env_id", "url", "kwargs", "token", "record", "jpeg_quality", "record_frames"]


def test_errors_share_one_base():
    for name in PUBLIC - {"RemoteEnv", "connect"}:
        assert issubclass(getattr(platform_sdk, name), platform_sdk.PlatformError)
