"""The options (session kwargs) a catalog entry declares, from its file's TOML.

A catalog file declares options for all its entries in `[options.<name>]` tables; an entry
adds its own, or changes some keys of the file's, in its `options`::

    [options.frameskip]
    type = "int"            # "int", "float", "bool", "string", "choice" or "list"
    default = 4             # the value when the kwarg is not given; omitted: null (the environment's own)
    minimum = 1             # int and float only, inclusive
    help = "Emulated frames per decision: metadata.control_rate = 60 / frameskip per second."

    [envs.pong]
    factory = "platform_envs.adapters.atari:make_env"
    options.mode = { type = "choice", choices = [0, 1] }
    options.frameskip = { default = 2 }      # keys over the file's [options.frameskip]

Every entry also lists the platform's own `endless` (last), which no file declares.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from platform_contracts.session_kwargs import ENDLESS
from simulusion.control.v1 import control_pb2

from platform_broker.option_values import NUMERIC_TYPES, OPTION_TYPES, allowed, value_fits

OPTION_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
OPTION_KEYS = ("type", "default", "minimum", "maximum", "choices", "help")
ENDLESS_OPTION = control_pb2.EnvOption(
    name=ENDLESS,
    type="bool",
    default_json="false",
    help="No time limit, and an episode that ends restarts in place (steps then report neither "
         "terminated nor truncated); not with a time limit kwarg (max_episode_steps, time_limit).",
)


class OptionError(ValueError):
    """A bad option declaration; the message says what is wrong (the caller adds where)."""


def option_tables(raw: Any, where: str) -> dict[str, dict[str, Any]]:
    """An `options` table (of `[options.<name>]` tables) checked for shape: names and keys.

    Raises:
        OptionError: not a table of tables, a bad name, an unknown key, or `endless`.
    """
    if not isinstance(raw, dict):
        raise OptionError(f"'{where}' must be a table of [{where}.<name>] tables")
    tables: dict[str, dict[str, Any]] = {}
    for name, table in raw.items():
        if not OPTION_NAME_RE.match(name):
            raise OptionError(f"option name {name!r} must be a Python identifier (letters, digits, '_')")
        if name == ENDLESS:
            raise OptionError(f"'{ENDLESS}' is the platform's own option (every entry has it): do not declare it")
        if not isinstance(table, dict):
            raise OptionError(f"option '{name}' must be a table, e.g. {{ type = \"int\", default = 1 }}")
        unknown = set(table) - set(OPTION_KEYS)
        if unknown:
            raise OptionError(f"option '{name}': unknown keys {sorted(unknown)}; allowed: {list(OPTION_KEYS)}")
        tables[name] = dict(table)
    return tables


def entry_options(
    file_tables: Mapping[str, Mapping[str, Any]], entry_tables: Mapping[str, Mapping[str, Any]]
) -> list[control_pb2.EnvOption]:
    """An entry's options: the file's, each with the entry's keys over it, then the entry's own,
    then `endless`.

    Raises:
        OptionError: a declaration that is incomplete or inconsistent once merged.
    """
    merged = {name: dict(table) for name, table in file_tables.items()}
    for name, table in entry_tables.items():
        merged[name] = {**merged.get(name, {}), **table}
    endless = control_pb2.EnvOption()
    endless.CopyFrom(ENDLESS_OPTION)
    return [parse_option(name, table) for name, table in merged.items()] + [endless]


def parse_option(name: str, table: Mapping[str, Any]) -> control_pb2.EnvOption:
    """One option's merged table as an `EnvOption`.

    Raises:
        OptionError: no or an unknown type, bounds on a non-number, choices missing or out of
            place, a help that is not one line, or a default the option does not allow.
    """
    kind = table.get("type")
    if kind not in OPTION_TYPES:
        raise OptionError(f"option '{name}': 'type' must be one of {list(OPTION_TYPES)}, got {kind!r}")
    help_text = table.get("help", "")
    if not isinstance(help_text, str) or "\n" in help_text:
        raise OptionError(f"option '{name}': 'help' must be a one-line string")
    option = control_pb2.EnvOption(name=name, type=kind, help=help_text)
    for bound in ("minimum", "maximum"):
        if bound not in table:
            continue
        value = table[bound]
        if kind not in NUMERIC_TYPES:
            raise OptionError(f"option '{name}': '{bound}' only goes with type \"int\" or \"float\"")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            raise OptionError(f"option '{name}': '{bound}' must be a number, got {value!r}")
        setattr(option, bound, float(value))
    if option.HasField("minimum") and option.HasField("maximum") and option.minimum > option.maximum:
        raise OptionError(f"option '{name}': 'minimum' is above 'maximum'")
    choices = table.get("choices")
    if kind == "list" and choices is not None and not all(isinstance(c, str) for c in choices or [None]):
        raise OptionError(f"option '{name}': a \"list\" option's 'choices' must be strings (the names it takes)")
    if kind in ("choice", "list") and (kind == "choice" or choices is not None):
        if not isinstance(choices, list) or not choices:
            raise OptionError(f"option '{name}': a \"{kind}\" needs 'choices', a list of values")
        for choice in choices:
            if not isinstance(choice, (str, int, float, bool)):
                raise OptionError(f"option '{name}': each choice must be a string, number or boolean, got {choice!r}")
        choices_json = [json.dumps(choice) for choice in choices]
        if len(set(choices_json)) != len(choices_json):
            raise OptionError(f"option '{name}': 'choices' lists a value twice")
        option.choices_json.extend(choices_json)
    elif choices is not None:
        raise OptionError(f"option '{name}': 'choices' only goes with type \"choice\" or \"list\"")
    default = table.get("default")
    try:
        option.default_json = json.dumps(default, allow_nan=False)
    except (TypeError, ValueError):  # TOML dates and times, inf, nan
        raise OptionError(f"option '{name}': 'default' must be a JSON value, got {default!r}") from None
    if default is not None and not value_fits(option, default):
        raise OptionError(f"option '{name}': 'default' {option.default_json} is not allowed: it must be {allowed(option)}")
    return option
