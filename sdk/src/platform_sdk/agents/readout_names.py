"""The agent data names with a set meaning (docs/agents.md, "What is recorded"), which the run
summary and the comparison measures read and benchmarks will read.

- `compute_s`: wall time spent deciding, in seconds (the loop adds it unless the readouts do).
- `refused`: 1 when the agent declined to answer (the summary counts them).
- `settle_steps`, `wait_steps`: the agent's own measure of the work a decision took, in its
  own steps (e.g. iterations until its estimate settled, steps it waited for a result); the
  summary and the measures give their mean per decision that reported them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

COMPUTE_S = "compute_s"
REFUSED = "refused"
WORK_NAMES = ("settle_steps", "wait_steps")


def work_values(readouts: Mapping[str, Any]) -> dict[str, float]:
    """The work measures one decision's readouts report (finite numbers only; a bool, a list or
    a NaN is not a measure of work and is left out here, as it would be from the recording)."""
    found: dict[str, float] = {}
    for name in WORK_NAMES:
        value = readouts.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            found[name] = float(value)
    return found
