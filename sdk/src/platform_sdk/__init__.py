"""The Simulusion platform's Python SDK.

`connect()` opens a session on a platform and returns it as a `gymnasium.Env`;
`python -m platform_sdk --factory module:make_env` hosts your own environment.
Names are imported lazily so that the environment server starts fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = [
    "EnvironmentCrashedError",
    "InvalidActionError",
    "PlatformError",
    "PlatformUnavailableError",
    "RemoteEnv",
    "SessionClosedError",
    "SessionNotFoundError",
    "connect",
]

_LAZY = {
    "connect": "platform_sdk.client.remote_env",
    "RemoteEnv": "platform_sdk.client.remote_env",
    "PlatformError": "platform_sdk.errors",
    "PlatformUnavailableError": "platform_sdk.errors",
    "SessionNotFoundError": "platform_sdk.errors",
    "SessionClosedError": "platform_sdk.errors",
    "InvalidActionError": "platform_sdk.errors",
    "EnvironmentCrashedError": "platform_sdk.errors",
}

if TYPE_CHECKING:
    from platform_sdk.client.remote_env import RemoteEnv, connect
    from platform_sdk.errors import (
        EnvironmentCrashedError,
        InvalidActionError,
        PlatformError,
        PlatformUnavailableError,
        SessionClosedError,
        SessionNotFoundError,
    )


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'platform_sdk' has no attribute {name!r}")
