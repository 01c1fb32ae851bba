"""The platform a benchmark measures: one it starts in a temporary folder, or `--url`'s."""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from platform_local import LocalPlatform


def add_platform_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", help="an already running platform (default: start one)")


@contextmanager
def platform_url(url: str | None, name: str, extra_env: Mapping[str, str] | None = None) -> Iterator[str]:
    """`url` itself, or the URL of a platform started for the benchmark (stopped on exit)."""
    if url is not None:
        yield url
        return
    from platform_local import LocalPlatform

    data_dir = Path(tempfile.mkdtemp(prefix=f"bench-{name}-"))
    print(f"starting a platform in {data_dir} ...", flush=True)
    platform = LocalPlatform(data_dir, None, dict(extra_env or {}))
    platform.start()
    try:
        yield platform.url
    finally:
        platform.stop()


@contextmanager
def started_platform(name: str, extra_env: Mapping[str, str] | None = None) -> Iterator[LocalPlatform]:
    """A platform started for the benchmark in a temporary folder (its recordings in
    `recordings_dir`), for benchmarks that stop and start its services; stopped on exit."""
    from platform_local import LocalPlatform

    data_dir = Path(tempfile.mkdtemp(prefix=f"bench-{name}-"))
    print(f"starting a platform in {data_dir} ...", flush=True)
    platform = LocalPlatform(data_dir, None, dict(extra_env or {}))
    platform.start()
    try:
        yield platform
    finally:
        platform.stop()
