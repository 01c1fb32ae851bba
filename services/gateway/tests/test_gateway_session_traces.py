"""The trace route's answer from the services' answers (`session_traces`): each span once, the
newest traces kept, ordered by trace then start, times in seconds and milliseconds."""

from __future__ import annotations

from platform_gateway.session_traces import session_trace
from simulusion.traces.v1 import traces_pb2


def _span(trace: str, span: str, parent: str, name: str, service: str, start_ns: int, duration_ns: int) -> traces_pb2.Span:
    return traces_pb2.Span(trace_id=trace * 32, span_id=span * 16, parent_span_id=parent * 16 if parent else "",
                           name=name, service=service, start_unix_nano=start_ns, duration_nano=duration_ns,
                           attributes={"session.id": "s1"}, kind="server")


def test_the_answers_merge_into_the_newest_traces_each_span_once() -> None:
    base = 1_700_000_000_000_000_000
    envhost = traces_pb2.RecentSpansReply(service="platform-envhost", spans=[
        _span("a", "1", "", "envhost.step", "platform-envhost", base, 3_000_000),
        _span("a", "2", "1", "env.step", "platform-env-server", base + 500_000, 2_000_000),
        _span("b", "3", "", "envhost.step", "platform-envhost", base + 10_000_000, 1_000_000),
        _span("c", "4", "", "envhost.step", "platform-envhost", base + 20_000_000, 1_000_000),
    ])
    recorder = traces_pb2.RecentSpansReply(service="platform-recorder", spans=[
        _span("c", "5", "4", "recorder.write", "platform-recorder", base + 30_000_000, 4_000_000),
        _span("a", "6", "1", "recorder.write", "platform-recorder", base + 9_000_000, 4_000_000),
    ])
    again = traces_pb2.RecentSpansReply(service="platform-envhost", spans=envhost.spans[2:])  # a second replica's copy
    answer = session_trace("s1", [envhost, recorder, again, traces_pb2.RecentSpansReply()], steps=2)
    assert answer.services == ["platform-envhost", "platform-recorder"]
    assert answer.traces == 2
    assert [(s.trace_id[0], s.name) for s in answer.spans] == [("b", "envhost.step"), ("c", "envhost.step"),
                                                                ("c", "recorder.write")]
    root, write = answer.spans[1], answer.spans[2]
    assert root.parent_span_id is None and write.parent_span_id == root.span_id
    assert write.start == round((base + 30_000_000) / 1e9, 6) and write.duration_ms == 4.0
    assert write.attributes == {"session.id": "s1"} and write.kind == "server" and not write.error
    assert session_trace("s1", [], steps=5).model_dump() == {"session_id": "s1", "services": [], "traces": 0, "spans": []}
