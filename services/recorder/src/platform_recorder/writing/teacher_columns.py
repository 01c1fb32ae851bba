"""`teacher.action` and `teacher.valid`: the action a teacher would have taken at each step.

An info with `teacher_action` (a demonstrator's or an expert policy's suggestion for the next
action, e.g. for imitation learning) gives the row of the step that follows it: row t is the
suggestion that came with observation t (the reset's info for row 0, step t-1's for the others),
so `teacher.action[t]` and `actions[t]` answer the same observation. The last step's suggestion
(for the final observation, which no action follows) is not kept.
    teacher.action[.key/.i]  rows like the episode's `actions[.key/.i]` (same dtype and shape),
                             zeros where a step had none
    teacher.valid            bool (T,): True where the step's `teacher_action` was recorded
For Dict or Tuple actions `teacher_action` is a map or list of the same structure. A value that
does not fit its action column (another shape, not a number, a fraction for an integer action)
leaves its row zero and not valid, with one warning per column. Written only when some step's
info has `teacher_action`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from platform_contracts.values import python_from_data
from simulusion.env.v1 import values_pb2

from platform_recorder.writing.npz_files import RowBytes

log = logging.getLogger(__name__)

TEACHER_KEY = "teacher_action"
TEACHER_ACTION = "teacher.action"
TEACHER_VALID = "teacher.valid"
ACTIONS = "actions"


def _pick(value: Any, path: Sequence[str]) -> Any:
    """The part of `value` that an action column `actions.<a>.<b>` holds (None when missing)."""
    for part in path:
        if isinstance(value, Mapping):
            value = value.get(part)
        elif isinstance(value, (list, tuple)) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def _fit(value: Any, column: np.ndarray) -> np.ndarray | str:
    """`value` as one row of `column`, or why it does not fit."""
    if value is None:
        return "it has no value for this part of the action"
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as exc:
        return str(exc)
    if array.dtype.kind not in "biuf":
        return f"it is not numeric ({array.dtype})"
    if array.shape != column.shape[1:]:
        return f"its shape {array.shape} is not the action's {column.shape[1:]}"
    row = array.astype(column.dtype)
    if column.dtype.kind in "biu" and not np.array_equal(row, array):
        return f"{array.tolist()} is not a value of the integer action"
    return row


def teacher_columns(
    infos: Sequence[values_pb2.DataMap | None], actions: Mapping[str, np.ndarray | RowBytes], where: str
) -> dict[str, np.ndarray]:
    """The teacher columns of an episode (see the module docstring).

    Args:
        infos: the info that came with each row's observation (None where there was none), one
            per row of `actions`.
        actions: the episode's action columns (`actions` or `actions.<key>`...).
        where: names the session and episode in log lines.
    """
    values: list[tuple[int, Any]] = []
    for row, info in enumerate(infos):
        data = info.fields.get(TEACHER_KEY) if info is not None else None
        if data is not None:
            values.append((row, python_from_data(data)))
    if not values:
        return {}
    names = [name for name in actions if name == ACTIONS or name.startswith(ACTIONS + ".")]
    if not names:
        return {}
    columns = {name: np.zeros_like(actions[name]) for name in names}
    valid = np.zeros(len(infos), dtype=bool)
    warned: set[str] = set()
    for row, value in values:
        fitted: dict[str, np.ndarray] = {}
        for name in names:
            fit = _fit(_pick(value, name.split(".")[1:]), columns[name])
            if isinstance(fit, str):
                if name not in warned:
                    warned.add(name)
                    log.warning("%s: info %r of step row %d does not fit %s: %s; such rows are left out",
                                where, TEACHER_KEY, row, name, fit)
                break
            fitted[name] = fit
        else:
            for name, fit in fitted.items():
                columns[name][row] = fit
            valid[row] = True
    out = {TEACHER_ACTION + name[len(ACTIONS):]: column for name, column in columns.items()}
    out[TEACHER_VALID] = valid
    return out
