"""`python -m platform_sdk.check`: the same as the `platform-check` script."""

from __future__ import annotations

from platform_sdk.server_extra import require_server_extra


def main() -> int:
    require_server_extra("platform-check")
    from platform_sdk.check.cli import main as check

    return check()


if __name__ == "__main__":
    raise SystemExit(main())
