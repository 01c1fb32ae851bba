"""`python -m platform_sdk`: the environment server (see `platform_sdk.server.cli`)."""

from __future__ import annotations

from platform_sdk.server_extra import require_server_extra


def main() -> int:
    require_server_extra("python -m platform_sdk")
    from platform_sdk.launch.parent_death import die_with_parent_if_asked  # the server side only

    die_with_parent_if_asked()  # before anything slow: a launcher that dies first still takes us along
    from platform_sdk.server.cli import main as serve

    return serve()


if __name__ == "__main__":
    raise SystemExit(main())
