"""The Simulusion platform's Python SDK.

`connect()` opens a session on a platform and returns it as a `gymnasium.Env`;
`python -m platform_sdk --factory module:make_env` hosts your own environment.
Names are imported lazily so that the environment server starts fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = [
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
]

_LAZY = {
    "connect": "platform_sdk.client.remote_env",
    "RemoteEnv": "platform_sdk.client.remote_env",
    "resume": "platform_sdk.client.resume",
    "upload_wad": "platform_sdk.client.wads",
    "make_vec": "platform_sdk.client.vector_env",
    "RemoteVectorEnv": "platform_sdk.client.vector_env",
    "register_catalog": "platform_sdk.gym_ids",
    "Held": "platform_sdk.client.holds",
    "PendingHold": "platform_sdk.client.holds",
    "InvalidRequestError": "platform_sdk.errors",
    "SessionBusyError": "platform_sdk.errors",
    "PlatformWarning": "platform_sdk.errors",
    "PlatformError": "platform_sdk.errors",
    "PlatformUnavailableError": "platform_sdk.errors",
    "OutcomeUnknownError": "platform_sdk.errors",
    "SessionNotFoundError": "platform_sdk.errors",
    "SessionClosedError": "platform_sdk.errors",
    "InvalidActionError": "platform_sdk.errors",
    "EnvironmentCrashedError": "platform_sdk.errors",
}

if TYPE_CHECKING:
    from platform_sdk.client.holds import Held, PendingHold
    from platform_sdk.client.remote_env import RemoteEnv, connect
    from platform_sdk.client.resume import resume
    from platform_sdk.client.vector_env import RemoteVectorEnv, make_vec
    from platform_sdk.client.wads import upload_wad
    from platform_sdk.gym_ids import register_catalog
    from platform_sdk.errors import (
        EnvironmentCrashedError,
        InvalidActionError,
        InvalidRequestError,
        OutcomeUnknownError,
        PlatformError,
        PlatformUnavailableError,
        PlatformWarning,
        SessionBusyError,
        SessionClosedError,
        SessionNotFoundError,
    )


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'platform_sdk' has no attribute {name!r}")
