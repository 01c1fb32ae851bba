"""The recorder in-process on a real nats-server: JetStream in, files and the NATS API out."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from platform_contracts import subjects
from recorder_testkit import ask as ask_recorder
from recorder_testkit import (
    closed,
    dict_obs,
    dict_spec,
    episode_events,
    load_episode,
    publish,
    read_meta,
    started,
    step_event,
    wait_drained,
    wait_for,
)


async def test_records_episodes_in_seq_order_with_agent_columns(
    recorder_js: tuple[Any, Any], recorder_service: Any, tmp_path: Path, unique_prefix: str
) -> None:
    _, js = recorder_js
    root = tmp_path / "recordings"
    sid = f"{unique_prefix}-cp"
    await publish(js, started(sid, kwargs={"render_mode": None}))
    seq = 1
    lengths = [10, 25, 7]
    for episode, length in enumerate(lengths):
        events = episode_events(sid, seq, episode, length, agent={"value": 0.25})
        events[2].step.agent.Clear()  # one step without agent data -> NaN
        for event in events:
            await publish(js, event)
        seq += length + 1
    await publish(js, closed(sid, last_seq=seq - 1))
    meta = await wait_for(
        lambda: (m := read_meta(root, sid)) and m.status == "closed" and m, what="closed meta"
    )
    assert [e["length"] for e in meta.episodes] == lengths
    assert meta.agent_keys == ["value"] and meta.last_seq == seq - 1
    assert meta.episodes[1]["return"] == sum(range(1, 26))
    seqs: list[int] = []
    for ep in meta.episodes:
        data = load_episode(root, sid, ep["index"])
        assert data["observations"].shape == (ep["length"] + 1, 4)
        assert data["observations"][1:, 0].tolist() == data["seq"].tolist()  # rows follow seq
        np.testing.assert_array_equal(data["agent.value"][:3], [0.25, np.nan, 0.25])
        seqs += [ep["first_seq"], *data["seq"].tolist()]
    assert seqs == list(range(1, seq))
    await wait_drained(js)


async def test_duplicate_seq_under_another_msg_id_is_written_once(
    recorder_js: tuple[Any, Any], recorder_service: Any, tmp_path: Path, unique_prefix: str
) -> None:
    _, js = recorder_js
    root = tmp_path / "recordings"
    sid = f"{unique_prefix}-dup"
    await publish(js, started(sid))
    events = episode_events(sid, 1, 0, 6)
    for event in events[:4]:
        await publish(js, event)
    # the same seqs again (a redelivery or a retried publish that JetStream did not dedupe)
    for event in events[1:4]:
        await publish(js, event, msg_id=f"{sid}:{event.seq}:again")
    for event in events[4:]:
        await publish(js, event)
    meta = await wait_for(lambda: (m := read_meta(root, sid)) and m.episodes and m, what="episode 0")
    data = load_episode(root, sid, 0)
    assert data["seq"].tolist() == [2, 3, 4, 5, 6, 7] and meta.episodes[0]["length"] == 6
    assert data["rewards"].tolist() == [1, 2, 3, 4, 5, 6]
    await wait_drained(js)


async def test_closed_mid_episode_and_dict_observations(
    recorder_js: tuple[Any, Any], recorder_service: Any, tmp_path: Path, unique_prefix: str
) -> None:
    _, js = recorder_js
    root = tmp_path / "recordings"
    sid = f"{unique_prefix}-dict"
    await publish(js, started(sid, spec=dict_spec()))
    for event in episode_events(sid, 1, 0, 4, last="", obs=dict_obs):
        await publish(js, event)
    await publish(js, closed(sid, last_seq=5, env_id="DictNav-v0"))
    meta = await wait_for(
        lambda: (m := read_meta(root, sid)) and m.status == "closed" and m, what="closed"
    )
    assert meta.episodes[0]["length"] == 4 and not meta.episodes[0]["terminated"]
    data = load_episode(root, sid, 0)
    assert data["observations.position"][:, 0].tolist() == [1, 2, 3, 4, 5]
    assert data["observations.goal"].tolist() == [1, 2, 3, 4, 0]
    # the part file goes right after meta.json lists its episode (meta.json first: see write_meta)
    await wait_for(lambda: not list((root / sid).glob("*.part")), what="the part file removed after meta.json")


async def test_unrecorded_session_leaves_nothing(
    recorder_js: tuple[Any, Any], recorder_service: Any, tmp_path: Path, unique_prefix: str
) -> None:
    _, js = recorder_js
    sid = f"{unique_prefix}-norec"
    await publish(js, started(sid, record=False))
    await publish(js, step_event(sid, 1, 0, 1))
    await publish(js, closed(sid))
    await wait_drained(js)
    assert not (tmp_path / "recordings" / sid).exists()


async def test_nats_api_lists_and_gets_recordings(
    recorder_js: tuple[Any, Any], recorder_service: Any, tmp_path: Path, unique_prefix: str
) -> None:
    nc, js = recorder_js
    a, b = f"{unique_prefix}-a", f"{unique_prefix}-b"
    await publish(js, started(a))
    await publish(js, started(b, spec=dict_spec()))
    for event in episode_events(a, 1, 0, 2):
        await publish(js, event)
    await wait_drained(js)
    # meta.json lists a finished episode within PLATFORM_RECORDER_META_INTERVAL (1 s)
    await wait_for(lambda: (m := read_meta(tmp_path / "recordings", a)) and m.episodes, what="episode 0 listed")

    async def ask(subject: str, body: Any) -> dict[str, Any]:
        return await ask_recorder(nc, subject, body)

    listing = await ask(subjects.RECORDER_LIST_RECORDINGS, {})
    assert sorted(m["session_id"] for m in listing["recordings"]) == [a, b]
    listing = await ask(subjects.RECORDER_LIST_RECORDINGS, {"env_id": "DictNav-v0"})
    assert [m["session_id"] for m in listing["recordings"]] == [b]
    listing = await ask(subjects.RECORDER_LIST_RECORDINGS, b"")
    assert len(listing["recordings"]) == 2
    got = await ask(subjects.RECORDER_GET_RECORDING, {"id": a})
    assert got["recording"]["episodes"][0]["length"] == 2
    assert got["recording"]["observation_space"]["high"][1] == "inf"  # strict JSON
    on_disk = json.loads((tmp_path / "recordings" / a / "meta.json").read_bytes())
    on_disk_info = json.loads((tmp_path / "recordings" / a / "recording.json").read_bytes())
    # recording.json's world changes and spec, with meta.json
    assert got == {"recording": {**on_disk, "world_changes": [], "spec": on_disk_info["spec"], "open_episode": None}}
    missing = await ask(subjects.RECORDER_GET_RECORDING, {"id": "nope"})
    assert missing["error"]["code"] == "not_found" and "nope" in missing["error"]["message"]
    for bad in ({"id": "../etc"}, {"id": "a/b"}, {}, b"{not a message"):
        reply = await ask(subjects.RECORDER_GET_RECORDING, bad)
        assert reply["error"]["code"] == "invalid_argument", (bad, reply)
    reply = await ask(subjects.RECORDER_LIST_RECORDINGS, {"session_id": "../x"})
    assert reply["error"]["code"] == "invalid_argument"


async def test_batch_span_only_for_traced_messages(
    recorder_js: tuple[Any, Any], recorder_service: Any, unique_prefix: str
) -> None:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    try:
        await _traced_batches(recorder_js, provider, exporter, unique_prefix)
    finally:
        exporter.shutdown()  # the provider is global: stop collecting for later tests


async def _traced_batches(
    recorder_js: tuple[Any, Any], provider: Any, exporter: Any, unique_prefix: str
) -> None:
    from platform_contracts.tracing import inject_dict

    _, js = recorder_js
    sid = f"{unique_prefix}-tr"
    await publish(js, started(sid))
    for event in episode_events(sid, 1, 0, 2, last=""):
        await publish(js, event)
    await wait_drained(js)
    assert not [s for s in exporter.get_finished_spans() if s.name == "recorder.batch"]
    with provider.get_tracer("test").start_as_current_span("agent step") as parent:
        await publish(js, step_event(sid, 4, 0, 3), headers=inject_dict())
    await wait_drained(js)
    spans = [s for s in exporter.get_finished_spans() if s.name == "recorder.batch"]
    assert len(spans) == 1
    assert spans[0].context.trace_id == parent.get_span_context().trace_id
    assert spans[0].attributes["messaging.batch.message_count"] == 1
    # the step's own span of its write: a child of the step that sent it, named by its session
    writes = [s for s in exporter.get_finished_spans() if s.name == "recorder.write"]
    assert len(writes) == 1 and writes[0].parent is not None
    assert writes[0].parent.span_id == parent.get_span_context().span_id
    assert writes[0].attributes["session.id"] == sid
    assert writes[0].end_time >= writes[0].start_time


async def test_failed_batch_is_retried_in_order_without_loss(
    recorder_js: tuple[Any, Any],
    recorder_service: Any,
    tmp_path: Path,
    unique_prefix: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="platform_recorder")
    _, js = recorder_js
    root = tmp_path / "recordings"
    sid = f"{unique_prefix}-fail"
    await publish(js, started(sid))
    await wait_for(lambda: read_meta(root, sid), what="the recording folder")
    blocker = root / sid / "episode-000001.part"
    blocker.mkdir()  # episode 1's part file cannot be opened: its batches fail
    for event in [*episode_events(sid, 1, 0, 3), *episode_events(sid, 5, 1, 4)]:
        await publish(js, event)
    await wait_for(lambda: "could not be written" in caplog.text, what="a failed batch")
    assert not (root / sid / "episode-000001.npz").exists()
    blocker.rmdir()
    meta = await wait_for(
        lambda: (m := read_meta(root, sid)) and len(m.episodes) == 2 and m, timeout=30, what="episode 1"
    )
    assert [e["length"] for e in meta.episodes] == [3, 4] and meta.missing_seqs == []
    seqs = [
        s
        for e in meta.episodes
        for s in [e["first_seq"], *load_episode(root, sid, e["index"])["seq"].tolist()]
    ]
    assert seqs == list(range(1, 10))
    assert "unacked messages: resuming" in caplog.text  # the consumer was rewound to its ack floor
    await wait_drained(js)
