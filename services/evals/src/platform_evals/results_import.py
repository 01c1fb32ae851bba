"""An `.eval` log read with Inspect's own reader: each score's metrics with the scorer's
standard error (`results.scores[*].metrics`), and a row per sample and epoch (input, target,
answer, scores, tokens, times, error, and its metadata's plain values: platform_sdk/episodes
puts its recording there).

A log cut short (an eval cancelled, or killed before Inspect finished it: status "cancelled" or
"started") is read as far as it is readable: the samples done before it stopped. The samples
Inspect itself cancelled are left out (they were not done); `note` says what was read."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, EvalSample, read_eval_log, read_eval_log_samples

MAX_TEXT = 4000


@dataclass(frozen=True)
class ImportedLog:
    status: str
    error: str
    scores: list[dict[str, Any]]
    samples: list[dict[str, Any]]
    note: str = ""  # for a log cut short: what of it was read


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + " [...]"


def _input_text(sample: EvalSample) -> str:
    if isinstance(sample.input, str):
        return sample.input
    return "\n".join(f"{message.role}: {message.text}" for message in sample.input)


def _scores(log: EvalLog) -> list[dict[str, Any]]:
    found = []
    for score in log.results.scores if log.results is not None else []:
        stderr = score.metrics.get("stderr")
        metrics = [{"name": name, "value": float(metric.value),
                    **({"stderr": float(stderr.value)} if stderr is not None else {})}
                   for name, metric in score.metrics.items() if name != "stderr"]
        found.append({"name": score.name, "scorer": score.scorer, "reducer": score.reducer or "",
                      "scored_samples": score.scored_samples or 0, "unscored_samples": score.unscored_samples or 0,
                      "metrics": metrics})
    return found


def _metadata(sample: EvalSample) -> dict[str, Any]:
    """The sample's metadata values that are text, numbers, true/false or null (text cut)."""
    return {str(name): _cut(value) if isinstance(value, str) else value
            for name, value in (sample.metadata or {}).items()
            if value is None or isinstance(value, (str, int, float, bool))}


def sample_row(log_name: str, sample: EvalSample) -> dict[str, Any]:
    target = sample.target if isinstance(sample.target, str) else "\n".join(sample.target)
    return {
        "log": log_name, "sample_id": str(sample.id), "epoch": sample.epoch, "input": _cut(_input_text(sample)),
        "target": _cut(target), "answer": _cut(sample.output.completion if sample.output else ""),
        "scores": {name: json.dumps(score.value) for name, score in (sample.scores or {}).items()},
        "tokens": sum(usage.total_tokens for usage in sample.model_usage.values()),
        "total_time": sample.total_time or 0.0, "working_time": sample.working_time or 0.0,
        "error": sample.error.message if sample.error is not None else "",
        "metadata_json": json.dumps(_metadata(sample)),
    }


def _cancelled(sample: EvalSample) -> bool:
    return sample.error is not None and sample.error.message.startswith("CancelledError")


def import_log(path: Path, log_name: str) -> ImportedLog:
    """Reads the header, then the samples one by one (a large log is never whole in memory).
    Raises what Inspect's reader raises for a log whose header cannot be read."""
    header = read_eval_log(str(path), header_only=True)
    samples: list[dict[str, Any]] = []
    note = ""
    try:
        for sample in read_eval_log_samples(str(path), all_samples_required=False):
            if header.status != "cancelled" or not _cancelled(sample):
                samples.append(sample_row(log_name, sample))
    except Exception as exc:  # noqa: BLE001 - a log cut mid-write: the samples before the cut are kept
        note = f"{log_name}: read as far as it is readable ({len(samples)} samples): {type(exc).__name__}: {exc}"
    if not note and header.status in ("cancelled", "started"):
        note = f"{log_name}: Inspect's log of a run cut short (status {header.status}): {len(samples)} samples done"
    return ImportedLog(status=header.status, error=header.error.message if header.error is not None else "",
                       scores=_scores(header), samples=samples, note=note)
