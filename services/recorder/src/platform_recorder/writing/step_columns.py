"""Columns from a step's agent data and info: `agent.<name>`, `info.is_success` and `outcome`.

    agent.<name>     float64 with one row per step and NaN where a step had no value: (T,) for a
                     number or boolean (0/1), (T, k) for a list of k numbers, (T, *shape) for an
                     array; a name keeps the shape of its first value in the episode (a later
                     value of another shape is left out, with a warning, and its row is NaN)
    info.is_success  bool (T,): each step info's `is_success` (tasks that define success report it
                     on every step; a number counts as true when not 0). Left out of an episode
                     where some steps did not report it (or reported something that is not a
                     number or boolean): a column with holes would say "failed" for them.
`outcome` is a 0-d string array: the episode's last step's `info["outcome"]` (e.g. Doom's), as
text (a value that is not text as its JSON), written only when that step has one.
The env host already checks the agent data rules (names, sizes, shapes across the session); here
only what cannot become a float64 row is left out.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence

import numpy as np
from platform_contracts.values import array_from_tensor, json_from_data
from simulusion.bus.v1 import events_pb2
from simulusion.env.v1 import environment_pb2, values_pb2

log = logging.getLogger(__name__)

SUCCESS_KEY = "is_success"
SUCCESS_COLUMN = f"info.{SUCCESS_KEY}"
OUTCOME_KEY = "outcome"
OUTCOME_COLUMN = "outcome"


def _scalar(data: values_pb2.Data) -> float | None:
    kind = data.WhichOneof("kind")
    if kind == "number":
        return data.number
    if kind == "integer":
        return float(data.integer)
    if kind == "flag":
        return 1.0 if data.flag else 0.0
    return None


def _numeric_array(array: np.ndarray) -> np.ndarray | None:
    if np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_:
        return array.astype(np.float64)
    return None


def agent_value(data: values_pb2.Data) -> np.ndarray | None:
    """One step's value of an agent name as float64 (shape () for a number or boolean, (k,) for a
    list of k numbers, the array's shape for a tensor); None when it is not numeric."""
    number = _scalar(data)
    if number is not None:
        return np.array(number, dtype=np.float64)
    kind = data.WhichOneof("kind")
    if kind == "list":
        items = [_scalar(item) for item in data.list.items]
        if not items or any(item is None for item in items):
            return None
        return np.array(items, dtype=np.float64)
    if kind == "tensor":
        try:
            return _numeric_array(array_from_tensor(data.tensor))
        except (TypeError, ValueError):
            return None
    return None


def scalar_value(data: values_pb2.Data) -> float | None:
    """A number, a boolean (0/1) or a one-element numeric array as a float; else None."""
    number = _scalar(data)
    if number is not None:
        return number
    if data.WhichOneof("kind") == "tensor":
        try:
            array = _numeric_array(array_from_tensor(data.tensor))
        except (TypeError, ValueError):
            return None
        if array is not None and array.size == 1:
            return float(array.reshape(()))
    return None


def agent_columns(transitions: Sequence[events_pb2.StepTransition], where: str) -> dict[str, np.ndarray]:
    """The `agent.<name>` columns of an episode's steps (see the module docstring)."""
    columns: dict[str, np.ndarray] = {}
    warned: set[str] = set()

    def warn(name: str, message: str, *args: object) -> None:
        if name not in warned:
            warned.add(name)
            log.warning("%s: agent data %r " + message, where, name, *args)

    for row, transition in enumerate(transitions):
        if not transition.HasField("agent"):
            continue
        for name, data in transition.agent.fields.items():
            value = agent_value(data)
            if value is None:
                warn(name, "is not numeric (%s), not recorded as a column", data.WhichOneof("kind"))
                continue
            column = columns.get(name)
            if column is None:
                column = columns[name] = np.full((len(transitions), *value.shape), np.nan, dtype=np.float64)
            if column.shape[1:] != value.shape:
                warn(name, "changed shape from %s to %s: rows of the new shape are left out",
                     column.shape[1:], value.shape)
                continue
            column[row] = value
    return {f"agent.{name}": columns[name] for name in sorted(columns)}


def step_success(result: environment_pb2.StepResponse) -> bool | None:
    """A step's `info["is_success"]` as a bool; None when it has none (or one that is not a
    number or boolean, or is NaN)."""
    data = result.info.fields.get(SUCCESS_KEY) if result.HasField("info") else None
    if data is None:
        return None
    value = scalar_value(data)
    if value is None or math.isnan(value):
        return None
    return value != 0.0


def success_column(results: Sequence[environment_pb2.StepResponse], where: str = "") -> dict[str, np.ndarray]:
    """`info.is_success` (bool, one row per step) when every step reported it, else nothing (see the
    module docstring)."""
    if not results:
        return {}
    column = np.zeros(len(results), dtype=bool)
    missing = 0
    for row, result in enumerate(results):
        value = step_success(result)
        if value is None:
            missing += 1
        else:
            column[row] = value
    if missing == len(results):
        return {}
    if missing:
        log.info("%s: %d of %d steps did not report info['is_success']: the episode has no info.is_success column",
                 where, missing, len(results))
        return {}
    return {SUCCESS_COLUMN: column}


def outcome_text(result: environment_pb2.StepResponse) -> str | None:
    """A step's `info["outcome"]` as text (a value that is not text as its JSON); None without one."""
    if not result.HasField("info"):
        return None
    data = result.info.fields.get(OUTCOME_KEY)
    if data is None:
        return None
    return data.text if data.WhichOneof("kind") == "text" else json.dumps(json_from_data(data))


def outcome_column(results: Sequence[environment_pb2.StepResponse]) -> dict[str, np.ndarray]:
    """`outcome` (0-d str) from the last step's `info["outcome"]` when it has one, else nothing."""
    text = outcome_text(results[-1]) if results else None
    return {} if text is None else {OUTCOME_COLUMN: np.array(text, dtype=str)}
