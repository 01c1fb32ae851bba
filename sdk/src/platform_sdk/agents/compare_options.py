"""The compare command's options (`python -m platform_sdk.agents.compare --help`), checked together."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from platform_contracts.session_kwargs import WORLD_CHANGES

from platform_sdk.agents.common_cli import OneLineParser, json_object, json_object_file, non_negative_int, positive_int

PROG = "platform-compare"
NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


def named(what: str) -> Any:
    """An argparse type for NAME=VALUE (VALUE: `what`)."""

    def parse(text: str) -> tuple[str, str]:
        name, equals, value = text.partition("=")
        if not equals or not value:
            raise argparse.ArgumentTypeError(f"expected NAME={what}, got {text!r}")
        if not NAME.match(name):
            raise argparse.ArgumentTypeError(f"the name {name!r} must be 1-64 letters, digits, '_', '.' or '-'")
        return name, value

    return parse


def build_parser() -> OneLineParser:
    parser = OneLineParser(
        prog=PROG,
        description="Branch several agents from one moment of one session and measure how each copes with the "
                    "same world changes; the results go to the Comparisons page.",
    )
    parser.add_argument("--env", required=True, metavar="ID", help="the environment's catalog id")
    parser.add_argument("--agent", action="append", type=named("MODULE:FUNCTION"), required=True, metavar="NAME=M:F",
                        dest="agents", help="an agent to compare, by name (repeat for each agent)")
    parser.add_argument("--kwargs", type=json_object, default=None, metavar="JSON",
                        help="the environment's arguments, a JSON object; its world_changes are the surprises")
    parser.add_argument("--warmup", type=non_negative_int, default=0, metavar="N",
                        help="steps a seeded random agent plays before the snapshot every agent starts from")
    parser.add_argument("--steps", type=positive_int, required=True, metavar="N", help="steps each agent plays")
    parser.add_argument("--window", type=positive_int, default=50, metavar="N",
                        help="steps the reward per step is averaged over (default 50)")
    parser.add_argument("--record", action="store_true", help="record each agent's session, frames too")
    parser.add_argument("--load", action="append", type=named("CHECKPOINT"), default=[], metavar="NAME=PATH",
                        help="start that agent from a saved checkpoint (its load(path))")
    parser.add_argument("--config", action="append", type=named("FILE"), default=[], metavar="NAME=FILE",
                        help="a JSON file of keyword arguments for that agent's factory")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="seeds the first reset and the warm-up agent")
    parser.add_argument("--seeds", type=positive_int, default=1, metavar="N",
                        help="run every agent over N seeds (S, S+1, ...): one warm-up and snapshot per seed, which "
                             "all agents start from; the page shows each measure's mean and range (default 1)")
    extras = parser.add_argument_group("platform")
    extras.add_argument("--url", help="the platform; default PLATFORM_URL, then http://127.0.0.1:8000")
    extras.add_argument("--token", metavar="T", help="API token; default PLATFORM_TOKEN")
    return parser


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    names = [name for name, _ in args.agents]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        parser.error(f"argument --agent: the name {duplicates[0]!r} is given twice: each agent needs its own name")
    args.loads = {}
    for name, path in args.load:
        if name not in names:
            parser.error(f"argument --load: no agent is named {name!r} (agents: {', '.join(names)})")
        if not Path(path).exists():
            parser.error(f"argument --load: {path} does not exist")
        args.loads[name] = Path(path)
    args.configs = {}
    for name, path in args.config:
        if name not in names:
            parser.error(f"argument --config: no agent is named {name!r} (agents: {', '.join(names)})")
        try:
            args.configs[name] = json_object_file(path)
        except argparse.ArgumentTypeError as exc:
            parser.error(f"argument --config: {exc}")
    timeline = (args.kwargs or {}).get(WORLD_CHANGES, [])
    if not isinstance(timeline, list):
        parser.error(f"argument --kwargs: {WORLD_CHANGES} must be a list of changes")
    args.world_changes = timeline
    return args
