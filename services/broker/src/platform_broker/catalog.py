"""The catalog of environments a session can be created from: built-ins plus `catalog.toml`.

A catalog file adds (or replaces) entries::

    family = "My lab"           # the family of the file's entries (default "Custom")

    [options.level]             # an option every entry of the file accepts (see env_options)
    type = "int"
    default = 1
    minimum = 1
    help = "The level to start at."

    [envs.lunar]
    gymnasium_id = "LunarLander-v3"
    description = "Land on the pad"
    kwargs = { continuous = true }
    family = "Box2D"            # this entry's own family
    options.gravity = { type = "float", default = -10.0, help = "Gravity (m/s^2)." }

    [envs.my-env]
    factory = "my_module:make_env"
    path = "./my_envs"          # relative to the catalog file's folder
    free_kwargs = true          # sessions may pass kwargs it does not declare (unchecked)
    gpus = 1                    # GPUs an instance needs (a pod per session: docs/kubernetes.md)

    [envs.my-sim]
    image = "my-org/my-simulator:latest"   # a Docker image serving the environment protocol
    # What a world-change timeline may name (platform_contracts.world_changes.WorldFacts):
    world = { mujoco = true, bodies = ["torso"], actuators = ["hip"], geoms = ["floor"], observation_size = 17 }

Each entry has exactly one of `gymnasium_id`, `factory` and `image`. A session may pass only
the kwargs an entry declares as options (and the platform's own, `platform_contracts.session_kwargs`;
`platform_broker.kwargs_check` refuses any other), unless the entry has `free_kwargs = true`: then
any kwarg reaches its factory, image or Gymnasium constructor unchecked. An entry's own `kwargs`
are fixed for its sessions unless an option of the same name declares them. The built-in files
(`builtin/*.toml`, one per family) have the same format; no built-in entry has free kwargs.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from platform_contracts.limits import MAX_ENTRY_GPUS
from platform_contracts.session_kwargs import WORLD_CHANGES
from platform_contracts.world_changes import WorldChangeError, WorldFacts, parse_timeline
from simulusion.control.v1 import control_pb2

from platform_broker.env_options import OptionError, entry_options, option_tables
from platform_broker.errors import ConfigError
from platform_broker.option_values import allowed, shown, value_fits

ENV_ID_RE = re.compile(r"^[A-Za-z0-9_-]+$")
_DOTTED = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
FACTORY_RE = re.compile(rf"^{_DOTTED}:{_DOTTED}$")
# A Docker image reference: no whitespace, and no leading '-' (it goes on a `docker run` line).
IMAGE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@+-]*$")
ENTRY_KEYS = {"gymnasium_id", "factory", "image", "path", "description", "kwargs", "family", "options", "world",
              "free_kwargs", "gpus"}
MAX_GPUS = MAX_ENTRY_GPUS  # the most GPUs one instance may ask for
FILE_KEYS = {"envs", "family", "options"}
DEFAULT_FAMILY = "Custom"

# Built-in entries: one TOML file per family in platform_broker/builtin/, same format as catalog.toml.
BUILTIN_PACKAGE = "platform_broker.builtin"
# Families listed first, in this order; any other built-in file follows in name order.
BUILTIN_ORDER = (
    "classic_control.toml", "atari.toml", "doom.toml", "gymnasium_mujoco.toml", "dm_control.toml", "menagerie.toml",
)


@dataclass(frozen=True)
class FileDefaults:
    """What a catalog file gives all its entries: a family and option declarations."""

    family: str = DEFAULT_FAMILY
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


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
        entries.update(parse_file(tomllib.loads(item.read_text(encoding="utf-8")), Path(f"<built-in {item.name}>")))
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
    entries.update(parse_file(data, path))
    return Catalog(entries)


def parse_file(data: Mapping[str, Any], path: Path) -> dict[str, control_pb2.CatalogEntry]:
    """The entries of one catalog file's TOML (`path` names it in messages and anchors `path` keys).

    Raises:
        ConfigError: an unknown top-level key, a bad `family` or `options`, or a bad entry.
    """
    unknown = set(data) - FILE_KEYS
    if unknown:
        raise ConfigError(f"catalog {path}: unknown top-level keys {sorted(unknown)}; "
                          "only family, [options.<name>] and [envs.<id>] tables")
    envs = data.get("envs", {})
    if not isinstance(envs, dict):
        raise ConfigError(f"catalog {path}: 'envs' must be a table of [envs.<id>] entries")
    family = data.get("family", DEFAULT_FAMILY)
    if not isinstance(family, str) or not family.strip():
        raise ConfigError(f"catalog {path}: 'family' must be a non-empty string, e.g. family = \"My lab\"")
    try:
        options = option_tables(data.get("options", {}), "options")
    except OptionError as exc:
        raise ConfigError(f"catalog {path}: {exc}") from None
    defaults = FileDefaults(family=family, options=options)
    return {env_id: parse_entry(env_id, raw, path, defaults) for env_id, raw in envs.items()}


def parse_entry(env_id: str, raw: Any, catalog_path: Path, defaults: FileDefaults | None = None) -> control_pb2.CatalogEntry:
    """One `[envs.<id>]` table as a CatalogEntry; `path` is resolved against the file's folder;
    `defaults`: the file's family and options (None: family "Custom", no file options)."""

    def bad(problem: str) -> ConfigError:
        return ConfigError(f"catalog {catalog_path}: entry '{env_id}': {problem}")

    if not ENV_ID_RE.match(env_id):
        raise bad("the id may hold only letters, digits, '-' and '_'")
    if not isinstance(raw, dict):
        raise bad("must be a table ([envs.<id>] with keys)")
    unknown = set(raw) - ENTRY_KEYS
    if unknown:
        raise bad(f"unknown keys {sorted(unknown)}; allowed: {sorted(ENTRY_KEYS)}")
    for key in ("gymnasium_id", "factory", "image", "path", "description", "family"):
        if key in raw and not isinstance(raw[key], str):
            raise bad(f"'{key}' must be a string")
    gymnasium_id, factory, image = raw.get("gymnasium_id", ""), raw.get("factory", ""), raw.get("image", "")
    if [bool(gymnasium_id), bool(factory), bool(image)].count(True) != 1:
        raise bad("needs exactly one of 'gymnasium_id', 'factory' and 'image'")
    if factory and not FACTORY_RE.match(factory):
        raise bad(f"'factory' must be 'module:function', got {factory!r}")
    if image and not IMAGE_RE.match(image):
        raise bad(f"'image' must be a Docker image reference such as 'my-org/sim:latest', got {image!r}")
    free_kwargs = raw.get("free_kwargs", False)
    if not isinstance(free_kwargs, bool):
        raise bad(f"'free_kwargs' must be true or false, got {free_kwargs!r}")
    gpus = raw.get("gpus", 0)
    if isinstance(gpus, bool) or not isinstance(gpus, int) or not 0 <= gpus <= MAX_GPUS:
        raise bad(f"'gpus' must be a whole number from 0 to {MAX_GPUS}, got {gpus!r}")
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
    defaults = defaults or FileDefaults()
    try:
        options = _options_of(raw, kwargs, defaults)
    except OptionError as exc:
        raise bad(str(exc)) from None
    family = raw.get("family", defaults.family)
    if not family.strip():
        raise bad("'family' must not be empty")
    world = raw.get("world")
    if world is not None and not isinstance(world, dict):
        raise bad("'world' must be a table, e.g. world = { mujoco = false, observation_size = 4 }")
    try:
        facts = WorldFacts.from_mapping(world) if world is not None else None
    except ValueError as exc:
        raise bad(f"'world': {exc}") from None
    if WORLD_CHANGES in kwargs:  # an entry's own timeline, checked as a session's is
        try:
            parse_timeline(kwargs[WORLD_CHANGES], facts)
        except WorldChangeError as exc:
            raise bad(f"kwargs.{exc}") from None
    world_json = facts.to_json() if facts is not None else ""
    default = f"Gymnasium {gymnasium_id}" if gymnasium_id else (f"Docker image {image}" if image else factory)
    return control_pb2.CatalogEntry(
        id=env_id, description=raw.get("description") or default, gymnasium_id=gymnasium_id, factory=factory,
        path=path, kwargs_json=kwargs_json, image=image, family=family, options=options, world_json=world_json,
        free_kwargs=free_kwargs, gpus=gpus,
    )


def _options_of(raw: Mapping[str, Any], kwargs: Mapping[str, Any], defaults: FileDefaults) -> list[control_pb2.EnvOption]:
    """An entry's options (the file's with its own over them); a kwarg the entry sets is its
    option's default.

    Raises:
        OptionError: a bad declaration, or an entry kwarg its option does not allow.
    """
    options = entry_options(defaults.options, option_tables(raw.get("options", {}), "options"))
    for option in options:
        if option.name in kwargs:
            value = kwargs[option.name]
            if not value_fits(option, value):
                raise OptionError(f"kwargs.{option.name} = {shown(value)} is not allowed by its option: "
                                  f"it must be {allowed(option)}")
            option.default_json = json.dumps(value)
    return options
