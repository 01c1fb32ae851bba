"""The local launcher behind `make run`: nats-server plus every platform service as child processes.

`platform-server` (or `platform-run`, or `python -m platform_local`) runs the platform in the
foreground, starting again a service that crashes;
`LocalPlatform` does the same from Python, for tests.
"""

from __future__ import annotations

from platform_local.errors import ConfigError, CrashLoop, LocalPlatformError, ServiceExited, StartTimeout
from platform_local.local_platform import LocalPlatform
from platform_local.services import SERVICES

__all__ = [
    "SERVICES",
    "ConfigError",
    "CrashLoop",
    "LocalPlatform",
    "LocalPlatformError",
    "ServiceExited",
    "StartTimeout",
]
