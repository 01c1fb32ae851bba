"""World changes at the env host: `ForRecording` never reaches the client (steps, auto-resets,
holds, batches; recorded or not), the step events keep it, the applied changes are logged with
their events' seq, and WorldChangesRequest is answered from that log. The instance is the
stand-in of world_change_kit (a real Router in process)."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
from platform_contracts.session_kwargs import lift
from platform_envhost import for_recording
from platform_envhost.instance_table import launch_spec
from platform_envhost.world_change_log import MAX_LOGGED_CHANGES, WorldChangeLog
from simulusion.control.v1 import control_pb2 as control_pb
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as values_pb
from simulusion.session.v1.options_pb2 import SessionOptions
from world_change_kit import ScriptedInstance, ScriptedRouter, observation, values_of

MASS = {"at": 1, "change": "mass", "body": "torso", "scale": 2.0}
OFFSET = {"at": 2, "change": "sensor_offset", "offset": 10.0, "reveal": True}
TIMELINE = [MASS, OFFSET]


@pytest.fixture
async def router() -> AsyncIterator[ScriptedRouter]:
    scripted = ScriptedRouter()
    yield scripted
    await scripted.close()


def _step(auto_reset: bool = False) -> env_pb.EnvRequest:
    return env_pb.EnvRequest(step=env_pb.StepRequest(action=values_pb.Value(discrete=0), auto_reset=auto_reset))


def _reset() -> env_pb.EnvRequest:
    return env_pb.EnvRequest(reset=env_pb.ResetRequest())


def _hold(steps: int, **fields: Any) -> env_pb.EnvRequest:
    return env_pb.EnvRequest(hold=env_pb.HoldRequest(action=values_pb.Value(discrete=0), steps=steps, **fields))


def _no_for_recording(response: env_pb.EnvResponse) -> None:
    assert not for_recording.carries(response), response


def _applied(entry: dict[str, Any], index: int, session_step: int, seq: int) -> dict[str, Any]:
    return {**entry, "index": index, "session_step": session_step, "seq": seq}


def _without_time(applied: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for entry in applied:
        assert isinstance(entry.pop("time"), float)
    return applied


async def test_an_answer_without_for_recording_goes_back_as_the_instance_sent_it(router: ScriptedRouter) -> None:
    plain = await router.add(ScriptedInstance("s1", {}))
    timed = await router.add(ScriptedInstance("s2", {"world_changes": TIMELINE}))
    for instance in (plain, timed):
        await router.ask(instance.session_id, _reset())
        answered = await router.raw(instance.session_id, _step())  # no change at session step 0
        assert answered is instance.answers[-1]  # the instance's bytes: not encoded again
    assert not plain.has_timeline and timed.has_timeline  # a session without a timeline is not even parsed


async def test_an_unrecorded_session_loses_for_recording_and_logs_its_changes(
        router: ScriptedRouter, caplog: pytest.LogCaptureFixture) -> None:
    await router.add(ScriptedInstance("s1", {"world_changes": TIMELINE}))
    caplog.set_level(logging.INFO, logger="platform_envhost.world_change_log")
    await router.ask("s1", _reset())
    seen, told = [], []
    for _ in range(4):
        response = await router.ask("s1", _step())
        _no_for_recording(response)
        seen.append(values_of(response.step.observation))
        told.append("world_changes" in response.step.info.fields)
    assert seen == [[1, 1], [2, 2], [13, 13], [14, 14]]  # the agent sees the offset from step 2 on
    assert told == [False, False, True, False]  # a revealed change is in the info of its step only
    timeline, applied = await router.world_changes("s1")
    assert timeline == TIMELINE
    assert _without_time(applied) == [_applied(MASS, 0, 1, 0), _applied(OFFSET, 1, 2, 0)]
    lines = [r.getMessage() for r in caplog.records]
    assert any("session s1 (counter)" in line and "session step 1" in line and "world change 0" in line
               and '"change": "mass"' in line for line in lines), lines


async def test_a_recorded_session_keeps_for_recording_in_its_events_only(router: ScriptedRouter) -> None:
    instance = await router.add(ScriptedInstance("s1", {"world_changes": TIMELINE}, record=True))
    _no_for_recording(await router.ask("s1", _reset()))
    for _ in range(4):
        _no_for_recording(await router.ask("s1", _step()))
    events = await router.events(instance)
    steps = [e for e in events if e.HasField("step")]
    assert [e.seq for e in steps] == [2, 3, 4, 5]
    changes = [[json.loads(t) for t in e.step.result.for_recording.world_changes_json] for e in steps]
    assert changes == [[], [{**MASS, "index": 0, "session_step": 1}], [{**OFFSET, "index": 1, "session_step": 2}], []]
    assert [values_of(e.step.result.observation) for e in steps] == [[1, 1], [2, 2], [13, 13], [14, 14]]
    assert not steps[1].step.result.for_recording.HasField("true_observation")
    assert [values_of(e.step.result.for_recording.true_observation) for e in steps[2:]] == [[3, 3], [4, 4]]
    _, applied = await router.world_changes("s1")
    assert _without_time(applied) == [_applied(MASS, 0, 1, 3), _applied(OFFSET, 1, 2, 4)]


async def test_an_auto_reset_step_records_each_part_of_its_for_recording_with_its_event(
        router: ScriptedRouter) -> None:
    timeline = [{"at": 0, "change": "sensor_offset", "offset": 100.0},  # applied at the first reset
                {"at": 1, "change": "mass", "body": "b", "scale": 3.0},  # at the ending step
                {"at": 2, "change": "mass", "body": "b", "scale": 1.0}]  # at the auto-reset after it
    instance = await router.add(ScriptedInstance("s1", {"world_changes": timeline}, record=True, episode_steps=2))
    _no_for_recording(await router.ask("s1", _reset()))
    _no_for_recording(await router.ask("s1", _step(auto_reset=True)))
    ended = await router.ask("s1", _step(auto_reset=True))  # ends the episode: final and first observations
    _no_for_recording(ended)
    assert ended.step.HasField("auto_reset")
    assert values_of(ended.step.auto_reset.final_observation) == [102, 102]
    events = await router.events(instance)
    assert [(e.seq, e.WhichOneof("kind")) for e in events] == [(1, "reset"), (2, "step"), (3, "step"), (4, "reset")]
    final, first = events[2], events[3]

    def indexes(for_recording: env_pb.ForRecording) -> list[int]:
        return [json.loads(t)["index"] for t in for_recording.world_changes_json]

    assert indexes(events[0].reset.for_recording) == [0]
    assert indexes(final.step.result.for_recording) == [1]
    assert values_of(final.step.result.observation) == [102, 102]
    assert values_of(final.step.result.for_recording.true_observation) == [2, 2]
    assert indexes(first.reset.for_recording) == [2]
    assert values_of(first.reset.observation) == [102, 100]
    assert values_of(first.reset.for_recording.true_observation) == [2, 0]
    _, applied = await router.world_changes("s1")
    assert [(a["index"], a["session_step"], a["seq"]) for a in applied] == [(0, 0, 1), (1, 1, 3), (2, 2, 4)]


async def test_holds_lose_for_recording_recorded_or_not(router: ScriptedRouter) -> None:
    await router.add(ScriptedInstance("plain", {"world_changes": TIMELINE}, episode_steps=100))
    recorded = await router.add(ScriptedInstance("rec", {"world_changes": TIMELINE}, record=True,
                                                 episode_steps=100))
    for session in ("plain", "rec"):
        await router.ask(session, _reset())
        held = await router.ask(session, _hold(3))
        _no_for_recording(held)
        assert held.hold.steps == 3 and not held.hold.kept
        kept = await router.ask(session, _hold(2, keep_steps=True))  # the client asks for the steps itself
        _no_for_recording(kept)
        assert len(kept.hold.kept) == 2 and values_of(kept.hold.kept[0].observation) == [14, 14]
    _, plain = await router.world_changes("plain")
    assert _without_time(plain) == [_applied(MASS, 0, 1, 0), _applied(OFFSET, 1, 2, 0)]
    events = await router.events(recorded)
    assert sum(1 for e in events if e.HasField("step")) == 5
    _, applied = await router.world_changes("rec")
    assert _without_time(applied) == [_applied(MASS, 0, 1, 3), _applied(OFFSET, 1, 2, 4)]
    assert [values_of(e.step.result.for_recording.true_observation) for e in events[3:]] == [[3, 3], [4, 4], [5, 5]]


@pytest.mark.parametrize("record", [False, True])
async def test_batches_lose_for_recording_and_name_the_sub_environment(router: ScriptedRouter, record: bool) -> None:
    instance = await router.add(ScriptedInstance("v1", {"world_changes": TIMELINE}, record=record, num_envs=2))
    assert instance.num_envs == 2

    def batch(make: Any) -> env_pb.EnvRequest:
        request = env_pb.EnvRequest()
        for index in range(2):
            request.batch.requests.add(index=index).request.CopyFrom(make())
        return request

    _no_for_recording(await router.ask("v1", batch(_reset)))
    for _ in range(3):
        response = await router.ask("v1", batch(_step))
        _no_for_recording(response)
    assert [values_of(sub.step.observation) for sub in response.batch.responses] == [[13, 13], [13, 13]]
    held = await router.ask("v1", batch(lambda: _hold(2)))
    _no_for_recording(held)
    _, applied = await router.world_changes("v1")
    seqs = (3, 4) if record else (0, 0)  # each sub-session numbers its own events
    assert sorted((a["env_index"], a["index"], a["seq"]) for a in applied) == [
        (0, 0, seqs[0]), (0, 1, seqs[1]), (1, 0, seqs[0]), (1, 1, seqs[1])]
    if record:
        events = await router.events(instance)
        assert {e.session_id for e in events} == {"v1-0", "v1-1"}
        assert any(e.step.result.for_recording.world_changes_json for e in events if e.HasField("step"))


async def test_a_session_without_a_timeline_answers_empty_world_changes(router: ScriptedRouter) -> None:
    await router.add(ScriptedInstance("s1", {"gravity": 9.0}))
    assert await router.world_changes("s1") == ([], [])


def test_for_the_client_keeps_an_answer_without_for_recording_as_it_is() -> None:
    answer = env_pb.EnvResponse(id=3, step=env_pb.StepResponse(observation=observation([1.0]))).SerializeToString()
    client, parsed = for_recording.for_the_client(answer)
    assert client is answer and parsed.id == 3
    carrying = env_pb.EnvResponse.FromString(answer)
    carrying.step.for_recording.world_changes_json.append('{"index": 0}')
    raw = carrying.SerializeToString()
    client, parsed = for_recording.for_the_client(raw)
    assert not env_pb.EnvResponse.FromString(client).step.HasField("for_recording")
    assert parsed.step.for_recording.world_changes_json == ['{"index": 0}']  # the original, whole


def test_the_log_keeps_the_newest_changes_and_skips_what_is_not_json(caplog: pytest.LogCaptureFixture) -> None:
    changes = WorldChangeLog([], lambda: "session s1 (x)")
    changes.add(["not json", "[1]"], 1, 1.0)
    assert len(changes) == 0 and "not JSON" in caplog.text and "not a JSON object" in caplog.text
    changes.add((json.dumps({"index": i}) for i in range(MAX_LOGGED_CHANGES + 5)), 2, 1.0)
    applied = env_pb.EnvResponse.FromString(changes.answer(7)).world_changes.applied_json
    assert len(applied) == MAX_LOGGED_CHANGES and json.loads(applied[0])["index"] == 5
    assert "the oldest leave the env host's log" in caplog.text


def test_the_timeline_is_the_sessions_else_the_catalog_entrys_own() -> None:
    entry = control_pb.CatalogEntry(id="counter", factory="counter:make",
                                    kwargs_json=json.dumps({"world_changes": TIMELINE[:1], "x": 1}))
    assert ScriptedInstance("s1", {}).world_changes.timeline == []
    assert ScriptedInstance("s2", {"world_changes": TIMELINE}).world_changes.timeline == TIMELINE
    own = launch_spec(entry, SessionOptions(env_id="counter"))
    assert own.kwargs == {"world_changes": TIMELINE[:1], "x": 1}
    options = SessionOptions(env_id="counter")
    lift({"world_changes": TIMELINE}, options)
    assert launch_spec(entry, options).kwargs == {"world_changes": TIMELINE, "x": 1}  # the session's over it
