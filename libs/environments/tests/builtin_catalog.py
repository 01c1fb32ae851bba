"""The broker's built-in catalog files, which the generators here write (`*_catalog` modules):
found through the installed `platform_broker` package (a dev dependency of these tests), never
by a path relative to this checkout."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

BUILTIN = Path(str(resources.files("platform_broker") / "builtin"))


def builtin_catalog_file(name: str) -> Path:
    """The built-in catalog file `name` (e.g. "atari.toml"); fails naming it when missing."""
    path = BUILTIN / name
    assert path.is_file(), f"platform_broker has no built-in catalog file {name} (looked in {BUILTIN})"
    return path
