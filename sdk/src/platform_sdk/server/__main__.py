"""Entry point of the `platform-env-server` script."""

from __future__ import annotations

from platform_sdk.server_extra import require_server_extra


def main() -> int:
    require_server_extra("platform-env-server")
    from platform_sdk.server.cli import main as serve

    return serve()


if __name__ == "__main__":
    raise SystemExit(main())
