"""The catalog of environments a session can be created from: built-ins plus `catalog.toml`.

A catalog file adds (or replaces) entries::

    [envs.lunar]
    gymnasium_id = "LunarLander-v3"
    description = "Land on the pad"
    kwargs = { continuous = true }

    [envs.my-env]
    factory = "my_module:make_env"
    path = "./my_envs"          # relative to the catalog file's folder

    [envs.my-sim]
    image = "my-org/my-simulator:latest"   # a Docker image serving the environment protocol

Each entry has exactly one of `gymnasium_id`, `factory` and `image`.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterator, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from simulusion.control.v1 import control_pb2

from platform_broker.errors import ConfigError

ENV_ID_RE = re.compile(r"^[A-Za-z0-9_-]+$")
_DOTTED = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
FACTORY_RE = re.compile(rf"^{_DOTTED}:{_DOTTED}$")
# A Docker image reference: no whitespace, and no leading '-' (it goes on a `docker run` line).
IMAGE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@+-]*$")
ENTRY_KEYS = {"gymnasium_id", "factory", "image", "path", "description", "kwargs"}

# Built-in entries: one TOML file per family in platform_broker/builtin/, same format as catalog.toml.
BUILTIN_PACKAGE = "platform_broker.builtin"
# Families listed first, in this order; any other built-in file follows in name order.
BUILTIN_ORDER = ("classic_control.toml", "atari.toml", "gymnasium_mujoco.toml", "dm_control.toml")


class Catalog:
    """The environments by id, in order: built-ins first, then the file's new entries."""

    def __init__(self, entries: Mapping[str, control_pb2.CatalogEntry]) -> None:
        self._entries = dict(entries)

    def get(self, env_id: str) -> control_pb2.CatalogEntry | None:
        return self._entries.get(env_id)

    def ids(self) -> list[str]:
        return list(self._entries)

    def entries(self) -> list[control_pb2.CatalogEntry]:
        return list(self._entries.values())

    def __contains__(self, env_id: object) -> bool:
        return env_id in self._entries

    def __iter__(self) -> Iterator[control_pb2.CatalogEntry]:
        return iter(self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)


def builtin_entries() -> dict[str, control_pb2.CatalogEntry]:
    """The built-in entries, from every `builtin/*.toml` in name order."""
    entries: dict[str, control_pb2.CatalogEntry] = {}
    folder = resources.files(BUILTIN_PACKAGE)
    rank = {name: i for i, name in enumerate(BUILTIN_ORDER)}
    for item in sorted(folder.iterdir(), key=lambda f: (rank.get(f.name, len(rank)), f.name)):
        if not item.name.endswith(".toml"):
            continue
        label = Path(f"<built-in {item.name}>")
        for env_id, raw in tomllib.loads(item.read_text(encoding="utf-8")).get("envs", {}).items():
            entries[env_id] = parse_entry(env_id, raw, label)
    return entries


def load_catalog(path: str | Path | None) -> Catalog:
    """The built-ins plus the entries of the catalog file at `path` (None: built-ins only).

    Raises:
        ConfigError: the file is missing or unreadable, or an entry is invalid; the one-line
            message names the file and the entry.
    """
    entries = builtin_entries()
    if path is None:
        return Catalog(entries)
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"catalog {path}: cannot read it: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"catalog {path}: not valid TOML: {exc}") from None
    unknown = set(data) - {"envs"}
    if unknown:
        raise ConfigError(f"catalog {path}: unknown top-level keys {sorted(unknown)}; only [envs.<id>] tables")
    envs = data.get("envs", {})
    if not isinstance(envs, dict):
        raise ConfigError(f"catalog {path}: 'envs' must be a table of [envs.<id>] entries")
    for env_id, raw in envs.items():
        entries[env_id] = parse_entry(env_id, raw, path)
    return Catalog(entries)


def parse_entry(env_id: str, raw: Any, catalog_path: Path) -> control_pb2.CatalogEntry:
    """One `[envs.<id>]` table as a CatalogEntry; `path` is resolved against the file's folder."""

    def bad(problem: str) -> ConfigError:
        return ConfigError(f"catalog {catalog_path}: entry '{env_id}': {problem}")

    if not ENV_ID_RE.match(env_id):
        raise bad("the id may hold only letters, digits, '-' and '_'")
    if not isinstance(raw, dict):
        raise bad("must be a table ([envs.<id>] with keys)")
    unknown = set(raw) - ENTRY_KEYS
    if unknown:
        raise bad(f"unknown keys {sorted(unknown)}; allowed: {sorted(ENTRY_KEYS)}")
    for key in ("gymnasium_id", "factory", "image", "path", "description"):
        if key in raw and not isinstance(raw[key], str):
            raise bad(f"'{key}' must be a string")
    gymnasium_id, factory, image = raw.get("gymnasium_id", ""), raw.get("factory", ""), raw.get("image", "")
    if [bool(gymnasium_id), bool(factory), bool(image)].count(True) != 1:
        raise bad("needs exactly one of 'gymnasium_id', 'factory' and 'image'")
    if factory and not FACTORY_RE.match(factory):
        raise bad(f"'factory' must be 'module:function', got {factory!r}")
    if image and not IMAGE_RE.match(image):
        raise bad(f"'image' must be a Docker image reference such as 'my-org/sim:latest', got {image!r}")
    kwargs = raw.get("kwargs", {})
    if not isinstance(kwargs, dict):
        raise bad("'kwargs' must be a table, e.g. kwargs = { continuous = true }")
    path = ""
    if "path" in raw:
        if not factory:
            raise bad("'path' only goes with 'factory'")
        resolved = (catalog_path.parent / raw["path"]).resolve()
        if not resolved.is_dir():
            raise bad(f"'path' {raw['path']!r} is not a folder ({resolved})")
        path = str(resolved)
    try:
        kwargs_json = json.dumps(kwargs)
    except (TypeError, ValueError) as exc:  # TOML dates and times are not JSON
        raise bad(f"'kwargs' must hold JSON values only: {exc}") from None
    default = f"Gymnasium {gymnasium_id}" if gymnasium_id else (f"Docker image {image}" if image else factory)
    return control_pb2.CatalogEntry(
        id=env_id, description=raw.get("description") or default, gymnasium_id=gymnasium_id, factory=factory,
        path=path, kwargs_json=kwargs_json, image=image,
    )
