"""The SDK's public names are pinned: removing or renaming one is a breaking change."""

from __future__ import annotations

import inspect

import platform_sdk

PUBLIC = {
    "EnvironmentCrashedError",
    "Held",
    "InvalidActionError",
    "InvalidRequestError",
    "OutcomeUnknownError",
    "PendingHold",
    "PlatformError",
    "PlatformUnavailableError",
    "PlatformWarning",
    "RemoteEnv",
    "RemoteVectorEnv",
    "SessionBusyError",
    "SessionClosedError",
    "SessionNotFoundError",
    "connect",
    "make_vec",
    "register_catalog",
    "resume",
    "upload_wad",
}
NOT_ERRORS = {"Held", "PendingHold", "PlatformWarning", "RemoteEnv", "RemoteVectorEnv", "connect", "make_vec", "resume",
              "upload_wad", "register_catalog"}


def test_public_exports_are_pinned():
    assert set(platform_sdk.__all__) == PUBLIC
    for name in PUBLIC:
        assert getattr(platform_sdk, name) is not None


def test_connect_signature_is_pinned():
    params = list(inspect.signature(platform_sdk.connect).parameters)
    assert params == ["env_id", "url", "kwargs", "token", "record", "jpeg_quality", "record_frames", "auto_reset",
                      "life", "frame_every", "max_frames", "reconnect_timeout", "direct", "durable"]
    resume = list(inspect.signature(platform_sdk.resume).parameters)
    assert resume == ["snapshot_id", "url", "token", "record", "life", "settings"]
    vec = list(inspect.signature(platform_sdk.make_vec).parameters)
    assert vec == ["env_id", "num_envs", "url", "kwargs", "token", "record", "autoreset_mode", "jpeg_quality",
                   "reconnect_timeout", "direct", "record_frames", "auto_reset", "life", "frame_every", "max_frames",
                   "durable"]
    assert set(params) - {"env_id"} <= set(vec)  # make_vec takes every option connect takes
    upload = list(inspect.signature(platform_sdk.upload_wad).parameters)
    assert upload == ["path", "url", "token", "name", "timeout"]


def test_errors_share_one_base():
    for name in PUBLIC - NOT_ERRORS:
        assert issubclass(getattr(platform_sdk, name), platform_sdk.PlatformError)
    assert issubclass(platform_sdk.PlatformWarning, UserWarning)
    assert issubclass(platform_sdk.OutcomeUnknownError, platform_sdk.PlatformUnavailableError)
