"""The base of the catalog environments' errors.

The environments run inside environment servers (the env host's instances), never in a client,
so their errors are not the client's `platform_sdk.PlatformError`: a bad option, a missing
emulator or robot, a broken WAD is an `EnvError` (and a `ValueError` where the caller passed
something wrong), which the environment server reports as the instance's start failure.
"""

from __future__ import annotations


class EnvError(Exception):
    """Base of the errors the catalog environments raise; the message says what to fix."""
