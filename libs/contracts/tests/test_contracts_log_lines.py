"""The platform's log lines (`platform_contracts.log_lines`): PLATFORM_LOG_FORMAT, the JSON
formatter's fields, session and trace ids, exceptions, the text format kept, and the wrapping of
a child's other output."""

from __future__ import annotations

import io
import json
import logging
import re
import warnings
from collections.abc import Iterator
from datetime import datetime

import pytest
from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags
from platform_contracts.log_lines import (
    LogFormatError,
    as_json_line,
    is_json_object,
    json_line,
    log_context,
    log_format_from,
    session_fields,
    setup_logging,
    to_the_root_handler,
)

TRACE_ID = 0x4BF92F3577B34DA6A3CE929D0E0E4736
SPAN_ID = 0x00F067AA0BA902B7


@pytest.fixture
def output() -> Iterator[io.StringIO]:
    """The root logger writing to a string (its handlers and level restored afterwards)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    stream = io.StringIO()
    yield stream
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)
    logging.captureWarnings(False)


def lines(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_the_format_is_text_unless_json_is_asked_for() -> None:
    assert log_format_from({}) == "text"
    assert log_format_from({"PLATFORM_LOG_FORMAT": ""}) == "text"
    assert log_format_from({"PLATFORM_LOG_FORMAT": "json"}) == "json"
    assert log_format_from({"PLATFORM_LOG_FORMAT": " JSON "}) == "json"
    with pytest.raises(LogFormatError) as error:
        log_format_from({"PLATFORM_LOG_FORMAT": "yaml"})
    assert str(error.value) == "PLATFORM_LOG_FORMAT='yaml' is not one of text, json"


def test_a_json_line_has_the_time_level_service_logger_and_message(output: io.StringIO) -> None:
    setup_logging("broker", "json", stream=output)
    logging.getLogger("platform_broker.handlers").info("session %s (%s): running", "s-1", "cartpole")
    logging.getLogger("platform_broker").debug("not at INFO")
    (line,) = lines(output)
    assert set(line) == {"time", "level", "service", "logger", "message"}
    assert line["level"] == "INFO" and line["service"] == "broker"
    assert line["logger"] == "platform_broker.handlers"
    assert line["message"] == "session s-1 (cartpole): running"
    assert isinstance(line["time"], str) and line["time"].endswith("Z")
    moment = datetime.fromisoformat(line["time"])
    assert moment.utcoffset() is not None and moment.utcoffset().total_seconds() == 0


def test_session_and_team_come_from_the_record_or_the_enclosing_context(output: io.StringIO) -> None:
    setup_logging("envhost", "json", stream=output)
    log = logging.getLogger("platform_envhost")
    log.info("started", extra=session_fields("s-1", "acme"))
    log.info("default team", extra=session_fields("s-2", ""))
    with log_context(session_id="s-3", team="lab"):
        log.info("inside")
        log.info("the record wins", extra=session_fields("s-4"))
    log.info("outside")
    found = [(line.get("session_id"), line.get("team")) for line in lines(output)]
    assert found == [("s-1", "acme"), ("s-2", None), ("s-3", "lab"), ("s-4", "lab"), (None, None)]


def test_trace_and_span_ids_come_from_the_current_valid_span(output: io.StringIO) -> None:
    setup_logging("gateway", "json", stream=output)
    log = logging.getLogger("platform_gateway")
    span = NonRecordingSpan(SpanContext(TRACE_ID, SPAN_ID, is_remote=False, trace_flags=TraceFlags(1)))
    with trace.use_span(span):
        log.info("in a span")
    log.info("in none")
    inside, outside = lines(output)
    assert inside["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert inside["span_id"] == "00f067aa0ba902b7"
    assert "trace_id" not in outside and "span_id" not in outside


def test_an_exception_is_one_string_field_on_one_line(output: io.StringIO) -> None:
    setup_logging("recorder", "json", stream=output)
    try:
        raise ValueError("the disk is full")
    except ValueError:
        logging.getLogger("platform_recorder").exception("cannot write")
    assert output.getvalue().count("\n") == 1
    (line,) = lines(output)
    assert line["level"] == "ERROR" and line["message"] == "cannot write"
    assert isinstance(line["exc_info"], str)
    assert line["exc_info"].startswith("Traceback (most recent call last):")
    assert line["exc_info"].endswith("ValueError: the disk is full")


def test_redaction_done_by_a_filter_reaches_the_json_line(output: io.StringIO) -> None:
    """Secrets are taken out before formatting (as the gateway's filter on uvicorn's loggers
    does): a JSON line carries the redacted message, never the original or its arguments."""

    class Redact(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            record.msg, record.args = re.sub(r"token=\w+", "token=***", record.getMessage()), None
            return True

    setup_logging("gateway", "json", stream=output)
    log = logging.getLogger("test_log_lines.redacted")
    log.addFilter(Redact())
    log.info('"GET /v0/sessions/s-1/stream?token=%s HTTP/1.1" %d', "s3cr3t", 101)
    assert "s3cr3t" not in output.getvalue()
    assert lines(output)[0]["message"] == '"GET /v0/sessions/s-1/stream?token=*** HTTP/1.1" 101'


def test_warnings_become_json_lines(output: io.StringIO) -> None:
    setup_logging("evals", "json", stream=output)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn("a deprecated call", DeprecationWarning, stacklevel=1)
    (line,) = lines(output)
    assert line["logger"] == "py.warnings" and line["level"] == "WARNING"
    assert "a deprecated call" in str(line["message"])


def test_text_stays_the_format_it_was(output: io.StringIO) -> None:
    setup_logging("machines", "text", "debug", stream=output)
    logging.getLogger("platform_machines").debug("checking %s", "gpu-1")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} DEBUG platform_machines: checking gpu-1\n",
                        output.getvalue())


def test_a_child_line_passes_whole_when_json_and_is_wrapped_otherwise() -> None:
    own = json_line("broker", "session s-1 closed", logger="platform_broker", session_id="s-1")
    assert as_json_line(own + "  ", "broker") == own
    wrapped = json.loads(as_json_line("Traceback (most recent call last):", "envhost"))
    assert wrapped["service"] == "envhost" and wrapped["logger"] == "output" and wrapped["level"] == "INFO"
    assert wrapped["message"] == "Traceback (most recent call last):"
    assert json.loads(as_json_line("[1234] [INF] Listening", "nats", instance="x"))["instance"] == "x"
    for not_an_object in ("[1, 2]", "{not json}", "", "{\"a\": 1} {\"b\": 2}"):
        assert not is_json_object(not_an_object)
        assert json.loads(as_json_line(not_an_object, "gateway"))["message"] == not_an_object


def test_uvicorn_loggers_hand_their_records_to_the_root(output: io.StringIO) -> None:
    import logging.config

    access = logging.getLogger("test_log_lines.access")
    access.addHandler(logging.StreamHandler(io.StringIO()))
    access.propagate = False  # as uvicorn's own config leaves it
    logging.config.dictConfig(to_the_root_handler("test_log_lines.access"))
    setup_logging("gateway", "json", stream=output)
    access.info("GET /v0/envs 200")
    assert access.handlers == [] and access.propagate
    assert lines(output)[0]["logger"] == "test_log_lines.access"
