"""How every process of the platform writes its log: `PLATFORM_LOG_FORMAT` = `text` (the
default: `<time> <LEVEL> <logger>: <message>`) or `json` (one JSON object per line, for log
pipelines). Every service's `__main__`, the local launcher and the environment instances the env
host starts set their logging up here (`setup_logging`), so the lines are the same everywhere.

A JSON line holds `time` (ISO 8601, UTC), `level`, `service`, `logger`, `message`; `session_id`
and `team` when the record is about a session (its `extra`, see `session_fields`, or the
enclosing `log_context`); `trace_id` and `span_id` when a valid OpenTelemetry span is current;
`exc_info` (the traceback, one string) when there is an exception. Redaction happens before
formatting (the services' filters and messages), so JSON lines are redacted as text lines are.

Standard library only (OpenTelemetry's API when installed): this module is in the client wheel
too, and every process imports it at start.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, Literal, TextIO

try:
    from opentelemetry import trace
except ImportError:  # the client wheel's base install
    trace = None  # type: ignore[assignment]

LOG_FORMAT_VARIABLE = "PLATFORM_LOG_FORMAT"
LogFormat = Literal["text", "json"]
LOG_FORMATS: tuple[LogFormat, ...] = ("text", "json")
TEXT_LINE = "%(asctime)s %(levelname)s %(name)s: %(message)s"
"""The text format (the platform's format before JSON lines existed)."""
CONTEXT_FIELDS = ("session_id", "team")
OUTPUT_LOGGER = "output"
"""The `logger` of a line a process printed outside logging (wrapped by whoever reads its output)."""

_context: ContextVar[Mapping[str, str] | None] = ContextVar("platform_log_context", default=None)


class LogFormatError(ValueError):
    """`PLATFORM_LOG_FORMAT` holds neither `text` nor `json`."""


def log_format_from(environ: Mapping[str, str]) -> LogFormat:
    """The log format `environ` asks for (`text` when unset or empty).

    Raises:
        LogFormatError: naming the variable and the values it takes.
    """
    value = environ.get(LOG_FORMAT_VARIABLE, "").strip().lower() or "text"
    if value not in LOG_FORMATS:
        raise LogFormatError(f"{LOG_FORMAT_VARIABLE}={environ[LOG_FORMAT_VARIABLE]!r} is not one of "
                             f"{', '.join(LOG_FORMATS)}")
    return value


def session_fields(session_id: str, team: str | None = None) -> dict[str, str]:
    """`extra=` for a record about a session: its id (and team) become fields of its JSON line."""
    return {"session_id": session_id, "team": team} if team else {"session_id": session_id}


@contextmanager
def log_context(*, session_id: str | None = None, team: str | None = None) -> Iterator[None]:
    """Every record logged inside (this task and those it starts) carries these fields."""
    fields = {name: value for name, value in (("session_id", session_id), ("team", team)) if value}
    token = _context.set({**(_context.get() or {}), **fields})
    try:
        yield
    finally:
        _context.reset(token)


def _now() -> str:
    return _iso(datetime.now(UTC))


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _trace_fields(line: dict[str, Any]) -> None:
    if trace is None:
        return
    span = trace.get_current_span().get_span_context()
    if span.is_valid:
        line["trace_id"] = format(span.trace_id, "032x")
        line["span_id"] = format(span.span_id, "016x")


class JsonLines(logging.Formatter):
    """Formats a record as one JSON object (no newline inside: a traceback is one string)."""

    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": _iso(datetime.fromtimestamp(record.created, UTC)),
            "level": record.levelname,
            "service": self.service,
            "logger": record.name,
            "message": record.getMessage(),
        }
        scope = _context.get()
        for name in CONTEXT_FIELDS:
            value = getattr(record, name, None) or (scope.get(name) if scope else None)
            if value:
                line[name] = str(value)
        _trace_fields(line)
        if record.exc_info:
            line["exc_info"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exc_info"] = record.exc_text
        if record.stack_info:
            line["stack_info"] = self.formatStack(record.stack_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def json_line(service: str, message: str, *, level: str = "INFO", logger: str = OUTPUT_LOGGER,
              **fields: str) -> str:
    """One JSON log line (no newline) written outside logging: the launcher's own lines, or a
    line of a child's output that was not JSON (`as_json_line`)."""
    line: dict[str, Any] = {"time": _now(), "level": level, "service": service, "logger": logger,
                            "message": message, **fields}
    return json.dumps(line, ensure_ascii=False)


def is_json_object(line: str) -> bool:
    """Whether `line` is one JSON object (a log line written by `JsonLines` or `json_line`)."""
    text = line.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return False
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def as_json_line(line: str, service: str, **fields: str) -> str:
    """A line a child process printed, for a JSON log: itself when it is a JSON object already,
    else wrapped into one (`logger` `output`, level INFO: it did not say) naming `service`."""
    if is_json_object(line):
        return line.strip()
    return json_line(service, line, **fields)


def setup_logging(service: str, log_format: LogFormat = "text", level: int | str = logging.INFO,
                  stream: TextIO | None = None) -> None:
    """The process's root logger: one handler on `stream` (stderr) in the format asked for, at
    `level` (a name such as "INFO" or "debug", or a number). In JSON mode Python's warnings are
    logged too (else they would be bare lines on stderr)."""
    handler = logging.StreamHandler(sys.stderr if stream is None else stream)
    handler.setFormatter(JsonLines(service) if log_format == "json" else logging.Formatter(TEXT_LINE))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level)
    if log_format == "json":
        logging.captureWarnings(True)


def to_the_root_handler(*loggers: str) -> dict[str, Any]:
    """A `logging.config.dictConfig` dictionary under which `loggers` have no handler of their own
    and hand their records to the root's (set by `setup_logging`): uvicorn's `log_config` in JSON
    mode, so its error and access lines are JSON lines too."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "loggers": {name: {"handlers": [], "propagate": True} for name in loggers},
    }


__all__ = [
    "CONTEXT_FIELDS", "LOG_FORMATS", "LOG_FORMAT_VARIABLE", "OUTPUT_LOGGER", "TEXT_LINE", "JsonLines",
    "LogFormat", "LogFormatError", "as_json_line", "is_json_object", "json_line", "log_context",
    "log_format_from", "session_fields", "setup_logging", "to_the_root_handler",
]
