"""The environment-server side (`python -m platform_sdk`, `platform-env-server`,
`platform-check`) needs the SDK's `server` extra; the client wheel installs without it. Its
commands check first, so a missing extra is one line naming the install command, not a
traceback about grpc."""

from __future__ import annotations

import importlib.util
import sys

SERVER_MODULES = ("grpc", "simplejpeg")  # what the server extra brings that the client lacks


def require_server_extra(command: str) -> None:
    """Exits 1 with one line on stderr when a module of the server extra is missing."""
    missing = [name for name in SERVER_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        print(f"{command}: error: this command needs the SDK's server extra ({', '.join(missing)} is not "
              "installed): pip install 'platform_sdk[server]'", file=sys.stderr, flush=True)
        raise SystemExit(1)
