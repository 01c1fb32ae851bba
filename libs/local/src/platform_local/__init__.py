"""The local launcher behind `make run`: nats-server plus every platform service as child processes.

`python -m platform_local` (or the `platform-run` script) runs the platform in the foreground;
`LocalPlatform` does the same from Python, for tests.
"""

from __future__ import annotations

from platform_local.errors import ConfigError, LocalPlatformError, ServiceExited, StartTimeout
from platform_local.launcher import LocalPlatform
from platform_local.services import SERVICES

__all__ = [
    "SERVICES",
    "ConfigError",
    "LocalPlatform",
    "LocalPlatformError",
    "ServiceExited",
    "StartTimeout",
]
