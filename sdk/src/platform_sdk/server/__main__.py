"""Entry point of the `platform-env-server` script."""

from __future__ import annotations

from platform_sdk.server.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
