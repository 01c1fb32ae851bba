"""`python -m platform_sdk`: the environment server (see `platform_sdk.server.cli`)."""

from __future__ import annotations

from platform_sdk.server.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
