"""Short, one-line texts for failure messages: of an exception, and of a value."""

from __future__ import annotations

from typing import Any

import numpy as np


def one_line(exc: BaseException) -> str:
    """The exception's type and message, on one line."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def short(value: Any, limit: int = 160) -> str:
    """`value` on one line, cut to `limit` characters (arrays summarized by numpy)."""
    if isinstance(value, np.ndarray):
        text = np.array2string(value, threshold=12, precision=4, separator=", ")
    else:
        text = repr(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
