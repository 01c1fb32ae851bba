"""What the agents' command lines share: one-line errors, number and JSON arguments."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, NoReturn


class OneLineParser(argparse.ArgumentParser):
    """argparse without abbreviations, where a bad argument is one line on stderr (exit 2)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(allow_abbrev=False, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def whole_number(text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
    return value


def positive_int(text: str) -> int:
    return whole_number(text, 1)


def non_negative_int(text: str) -> int:
    return whole_number(text, 0)


def json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not valid JSON ({exc.msg} at character {exc.pos}): {text!r}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object like '{{\"name\": 1}}', got {text!r}")
    return value


def json_object_file(text: str) -> dict[str, Any]:
    """A JSON file holding an object (the factory's keyword arguments)."""
    path = Path(text)
    try:
        content = path.read_text()
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"cannot read {text}: {exc.strerror or exc}") from None
    try:
        value = json.loads(content)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"{text} is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"{text} must hold a JSON object of keyword arguments, "
                                         f"got {type(value).__name__}")
    return value
