"""`python -m platform_sdk.check`: the same as the `platform-check` script."""

from __future__ import annotations

from platform_sdk.check.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
