"""TOML text of the broker's built-in catalog files, for the generators (`*_catalog` modules).

The format is the broker's (`platform_broker.catalog`, `platform_broker.env_options`): a
file-level `family`, `[options.<name>]` tables every entry accepts, then `[envs.<id>]` tables
whose `options.<name>` keys add options or change the file's for that entry.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

# Option keys in the order they are written.
OPTION_KEYS = ("type", "default", "minimum", "maximum", "choices", "help")


def toml_value(value: Any) -> str:
    """`value` (a string, bool, number, list or mapping of them) as an inline TOML value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string: JSON's escapes are TOML's
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            raise ValueError("TOML catalog values cannot be nan")
        return ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, Mapping):
        return inline_table(value)
    if isinstance(value, Sequence):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    raise TypeError(f"no TOML form for {type(value).__name__}: {value!r}")


def inline_table(table: Mapping[str, Any]) -> str:
    """`{ key = value, ... }`, keys in option order first (for option tables), then as given.
    A None value is left out (the broker reads a missing default as null)."""
    keys = [key for key in OPTION_KEYS if key in table] + [key for key in table if key not in OPTION_KEYS]
    parts = [f"{key} = {toml_value(table[key])}" for key in keys if table[key] is not None]
    return "{ " + ", ".join(parts) + " }"


def file_head(comment: str, family: str, options: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """A file's comment lines (`comment`, each line prefixed "# "), its `family` and its
    `[options.<name>]` tables."""
    lines = [f"# {line}".rstrip() for line in comment.strip("\n").split("\n")]
    lines += ["", f"family = {toml_value(family)}"]
    for name, table in options.items():
        lines += ["", f"[options.{name}]"]
        lines += [f"{key} = {toml_value(table[key])}" for key in OPTION_KEYS if table.get(key) is not None]
    return lines


def entry_lines(
    env_id: str, fields: Mapping[str, Any], options: Mapping[str, Mapping[str, Any]] | None = None
) -> list[str]:
    """An `[envs.<id>]` table: `fields` (factory, kwargs, description, ...) then one
    `options.<name> = { ... }` line per option of the entry's own."""
    lines = ["", f"[envs.{env_id}]"]
    lines += [f"{key} = {toml_value(value)}" for key, value in fields.items()]
    lines += [f"options.{name} = {inline_table(table)}" for name, table in (options or {}).items()]
    return lines
