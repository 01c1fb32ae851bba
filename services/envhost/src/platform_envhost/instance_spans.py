"""The spans of this host's environment instances, for the trace view.

An instance has no bus: the env host gives each instance it starts as a process a file to append
its finished spans to (`SIMULUSION_SPAN_FILE`, `platform_contracts.recent_spans.SpanFile`) and
reads it when the gateway gathers a session's recent spans (`platform_bus.recent_spans`): the
instance's spans of the session's traces that the env host itself saw. Pods and Docker images'
instances keep theirs (they still export them over OTLP when told to).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from platform_contracts.recent_spans import read_span_file
from simulusion.traces.v1 import traces_pb2

if TYPE_CHECKING:
    from platform_envhost.instance_table import InstanceTable

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


def instance_span_file(run_dir: Path, name: str) -> Path:
    """The span file of the instance `name` (its log's neighbour)."""
    return run_dir / f"{name}.spans.jsonl"


def session_instance_spans(table: "InstanceTable", session_id: str, trace_ids: set[str]) -> list[traces_pb2.Span]:
    """The spans of `session_id`'s instance in the traces `trace_ids`: from its running instance's
    span file, or, once it ended, from the file an instance started for the session left."""
    instance = table.get(session_id)
    span_file = getattr(instance.process, "span_file", None) if instance is not None else None
    if span_file is None:
        span_file = instance_span_file(table.run_dir, _UNSAFE_NAME.sub("_", session_id))
    return read_span_file(span_file, trace_ids)
