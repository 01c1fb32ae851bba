"""`state.<name>` columns: the labelled parts of each observation, for environments with labels.

An environment's observation labels `(name, start, stop)` name slices of its flat observation,
`gymnasium.spaces.flatten(observation_space, obs)` (DeepMind Control's `height`, `velocity`...,
a robot's joint positions). `state.<name>` is float64 `(rows, stop - start)`, one row per
observation row: row i is `flat(observations[i])[start:stop]`, what the SDK's
`env.labelled(obs)[name]` gives for that observation.

The flat observation is rebuilt from the episode's observation columns and the observation
space's JSON form (meta.json's `observation_space`, `platform_contracts.json_values`), with
Gymnasium's rules but without importing it: Box and MultiBinary raveled, Discrete one-hot (n
values), MultiDiscrete one-hot per component (starting at 0: the JSON form has no start), Dict in
the space's key order, Tuple in order.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from platform_recorder.writing.npz_files import RowBytes

log = logging.getLogger(__name__)

STATE_PREFIX = "state."
OBSERVATIONS = "observations"
Label = tuple[str, int, int]


class StateColumnError(ValueError):
    """The observation columns do not fit the observation space or its labels."""


def parse_labels(labels: Any) -> list[Label]:
    """Labels in any of their JSON forms as (name, start, stop): a list of `{"name", "start",
    "stop"}` objects (recording.json), a list of `[name, start, stop]`, or `{name: [start, stop]}`
    (the gateway's). None or empty: []."""
    if not labels:
        return []
    items: Iterable[Any] = labels.items() if isinstance(labels, Mapping) else labels
    out: list[Label] = []
    for item in items:
        if isinstance(item, Mapping):
            out.append((str(item["name"]), int(item["start"]), int(item["stop"])))
        elif isinstance(labels, Mapping):
            name, (start, stop) = item
            out.append((str(name), int(start), int(stop)))
        else:
            name, start, stop = item
            out.append((str(name), int(start), int(stop)))
    return out


def _one_hot(values: np.ndarray, sizes: list[int], what: str) -> np.ndarray:
    """Rows of integers (rows, k) as one-hot blocks of `sizes` (one per column), concatenated."""
    rows = values.shape[0]
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    if np.any(values < 0) or np.any(values >= np.asarray(sizes)):
        raise StateColumnError(f"{what}: a value is outside its Discrete range {sizes}")
    flat = np.zeros((rows, int(sum(sizes))), dtype=np.float64)
    flat[np.arange(rows)[:, None], offsets[None, :] + values] = 1.0
    return flat


def flat_observations(arrays: Mapping[str, np.ndarray], space: Mapping[str, Any], rows: int,
                      prefix: str = OBSERVATIONS) -> np.ndarray:
    """The flat observations (rows, flatdim) as float64, from the columns under `prefix`.

    Raises:
        StateColumnError: a column is missing or does not fit its space.
    """
    kind = space.get("type")
    if kind in ("dict", "tuple"):
        subspaces = space["spaces"]
        named = subspaces.items() if kind == "dict" else enumerate(subspaces)
        parts = [flat_observations(arrays, sub, rows, f"{prefix}.{key}") for key, sub in named]
        return np.concatenate(parts, axis=1) if parts else np.zeros((rows, 0), dtype=np.float64)
    column = arrays.get(prefix)
    if column is None:
        raise StateColumnError(f"the episode has no column {prefix!r} for its {space.get('repr', kind)}")
    if column.shape[:1] != (rows,):
        raise StateColumnError(f"column {prefix!r} has {column.shape[0]} rows, not {rows}")
    if kind in ("box", "multi_binary"):
        return column.reshape(rows, -1).astype(np.float64)
    if kind == "discrete":
        values = column.reshape(rows, 1).astype(np.int64) - int(space.get("start", 0))
        return _one_hot(values, [int(space["n"])], prefix)
    if kind == "multi_discrete":
        sizes = [int(n) for n in np.ravel(space["nvec"])]
        return _one_hot(column.reshape(rows, -1).astype(np.int64), sizes, prefix)
    raise StateColumnError(f"{prefix!r}: unknown space type {kind!r}")


def state_columns(arrays: Mapping[str, np.ndarray | RowBytes], spec: Mapping[str, Any] | None,
                  where: str) -> dict[str, np.ndarray]:
    """`state.<name>` for each label of `spec` (see the module docstring); {} without labels.

    Args:
        arrays: the episode's columns (its `observations[.key/.i]` are used).
        spec: the session's spec as recording.json keeps it: `observation_space` (JSON form) and
            `observation_labels`.
        where: names the session and episode in log lines.
    """
    if not spec:
        return {}
    try:
        labels = parse_labels(spec.get("observation_labels"))
    except (KeyError, TypeError, ValueError) as exc:
        log.error("%s: observation labels %r unreadable (%s); no state columns", where,
                  spec.get("observation_labels"), exc)
        return {}
    if not labels:
        return {}
    space = spec.get("observation_space")
    columns = [name for name in arrays if name == OBSERVATIONS or name.startswith(OBSERVATIONS + ".")]
    if not space or not columns:
        log.error("%s: observation labels without %s; no state columns",
                  where, "an observation space" if not space else "observations")
        return {}
    rows = len(arrays[columns[0]])
    try:
        flat = flat_observations({name: np.asarray(arrays[name]) for name in columns}, space, rows)
    except (KeyError, TypeError, ValueError) as exc:
        log.error("%s: no state columns, the observations do not fit the space: %s", where, exc)
        return {}
    out: dict[str, np.ndarray] = {}
    for name, start, stop in labels:
        if not 0 <= start < stop <= flat.shape[1]:
            log.error("%s: observation label %r [%d, %d) is outside the flat observation of size %d",
                      where, name, start, stop, flat.shape[1])
            continue
        out[STATE_PREFIX + name] = np.ascontiguousarray(flat[:, start:stop])
    return out
