"""The text of the stream's JSON answers, made with orjson.

An answer carries the step's observation as numbers when the page asks for it ("full"): a
humanoid's 348 floats took the standard library's encoder about 0.6 ms a step, most of the
gateway's CPU for a browser step, against about 0.05 ms with orjson (bench/browser_play_rate.py).
It reads back as the same values (floats are written in their shortest round-trip form, as the
standard library does, though spelled `1e-5` where it writes `1e-05`). What orjson refuses (an integer past 64
bits, a non-finite float: `json_views` already writes those as "inf"/"nan" strings) falls back to
the standard library, so an answer is never lost to its encoding.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


def answer_text(answer: dict[str, Any]) -> str:
    """`answer` as compact JSON text."""
    try:
        return orjson.dumps(answer, option=_OPTIONS).decode()
    except (TypeError, orjson.JSONEncodeError):  # orjson's limits: the standard library's reading
        return json.dumps(answer, separators=(",", ":"), default=_fallback)


def _fallback(value: Any) -> Any:
    tolist = getattr(value, "tolist", None)
    if tolist is None:
        raise TypeError(f"an answer holds a {type(value).__name__}, which is not JSON")
    return tolist()
