"""`python -m platform_envs.robots.menagerie [NAMES...]`: fetch Menagerie robots ahead of time.

Without names it fetches the built-in catalog's robots. `--list` prints every robot Menagerie
has. Each download shows a progress bar on a terminal (a line per robot otherwise); an unknown
robot or a failed download exits 1 with one line.
"""

from __future__ import annotations

import argparse
import sys

from platform_envs.robots.menagerie import CATALOG_ROBOTS, package, robot_names, robot_path
from platform_envs.robots.errors import RobotError


def main(argv: list[str] | None = None, prog: str = "python -m platform_envs.robots.menagerie") -> int:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Download MuJoCo Menagerie robots into the cache (MENAGERIE_CACHE_DIR) ahead of time.",
    )
    parser.add_argument("names", nargs="*", help=f"robots to fetch (default: {' '.join(CATALOG_ROBOTS)})")
    parser.add_argument("--list", action="store_true", help="print every robot Menagerie has and exit")
    args = parser.parse_args(argv)
    try:
        if args.list:
            print("\n".join(robot_names()))
            return 0
        progress = _bar if sys.stderr.isatty() else None
        for name in args.names or CATALOG_ROBOTS:
            path = robot_path(name, progress=progress)
            print(f"{name}: {path}")
    except RobotError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def _bar(name: str, done: int, total: int) -> None:
    package().print_progress(name, done, total)


if __name__ == "__main__":
    sys.exit(main())
