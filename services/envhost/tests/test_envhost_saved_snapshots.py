"""save_snapshot and restore_saved through a real env host and environment server, against a
stand-in of the recorder's saved snapshot API (step_path_kit.SnapshotStoreStandIn); the
cross-service tests run them against the real recorder."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from envhost_testkit import EnvHostProcess, new_session_id, recorded_events, stop_session
from platform_contracts import subjects
from platform_contracts.step_batches import parse_batch
from platform_envhost.saved_snapshots import SavedSnapshots
from simulusion.session.v1.options_pb2 import SessionOptions
from simulusion.control.v1 import control_pb2 as control_pb
from simulusion.env.v1 import environment_pb2 as env_pb
from step_path_kit import SnapshotStoreStandIn, batch, batch_messages, reset, start, step


def save(label: str) -> env_pb.EnvRequest:
    return env_pb.EnvRequest(save_snapshot=env_pb.SaveSnapshotRequest(label=label))


def restore_saved(snapshot_id: str) -> env_pb.EnvRequest:
    return env_pb.EnvRequest(restore_saved=env_pb.RestoreSavedRequest(id=snapshot_id))


@pytest.fixture
async def store(nats_client: Any) -> AsyncIterator[SnapshotStoreStandIn]:
    stand_in = await SnapshotStoreStandIn(nats_client).start()
    yield stand_in
    await stand_in.stop()


async def _trajectory(link: Any, actions: list[int]) -> list[env_pb.StepResponse]:
    return [(await link.request(step(a))).step for a in actions]


async def test_a_saved_snapshot_returns_the_session_to_that_moment(
        envhost: EnvHostProcess, nats_client: Any, js: Any, open_link: Any, store: SnapshotStoreStandIn) -> None:
    session_id = new_session_id()
    await start(nats_client, envhost.host_id, session_id, record=True, kwargs_json='{"max_episode_steps": 300}')
    link = await open_link(envhost.step_address, session_id)
    await link.request(reset(seed=11))
    await _trajectory(link, [0, 1, 1])
    saved = await link.request(save("before the swing"))
    assert saved.WhichOneof("result") == "save_snapshot", saved
    snapshot = saved.save_snapshot.saved
    assert snapshot.id in store.saved
    assert (snapshot.label, snapshot.session_id, snapshot.env_id, snapshot.seq) == (
        "before the swing", session_id, "cartpole", 4)
    assert json.loads(snapshot.kwargs_json) == {"max_episode_steps": 300}
    assert snapshot.size_bytes == len(store.saved[snapshot.id][1]) > 0 and store.saved[snapshot.id][2] == "pickle"
    actions = [1, 0, 0, 1, 0]
    original = await _trajectory(link, actions)

    restored = await link.request(restore_saved(snapshot.id))
    assert restored.WhichOneof("result") == "restore_saved", restored
    assert restored.restore_saved.HasField("seconds") and restored.restore_saved.seconds > 0  # import_state's
    again = await _trajectory(link, actions)
    assert again == original  # it carries on exactly as it did from the saved moment

    events = await recorded_events(js, session_id, 1 + 3 + 5 + 1 + 5)
    restore_event = events[9]
    assert restore_event.WhichOneof("kind") == "restore" and (restore_event.seq, restore_event.episode) == (10, 1)
    assert restore_event.restore.observation == restored.restore_saved.observation
    assert [e.step.result for e in events[10:]] == again
    await stop_session(nats_client, envhost.host_id, session_id)


async def test_a_snapshot_of_other_arguments_is_refused_naming_both(
        envhost: EnvHostProcess, nats_client: Any, open_link: Any, store: SnapshotStoreStandIn) -> None:
    first, second = new_session_id(), new_session_id()
    await start(nats_client, envhost.host_id, first, kwargs_json='{"max_episode_steps": 300}')
    await start(nats_client, envhost.host_id, second)
    link = await open_link(envhost.step_address, first)
    await link.request(reset(seed=1))
    snapshot_id = (await link.request(save("a"))).save_snapshot.saved.id
    other = await open_link(envhost.step_address, second)
    await other.request(reset(seed=1))
    refused = await other.request(restore_saved(snapshot_id))
    assert refused.error.code == env_pb.ERROR_CODE_FAILED_PRECONDITION
    assert '"max_episode_steps": 300' in refused.error.message and "this session has {}" in refused.error.message
    unknown = await other.request(restore_saved("nope"))
    assert unknown.error.code == env_pb.ERROR_CODE_NOT_FOUND and "'nope'" in unknown.error.message
    empty = await other.request(restore_saved(""))
    assert empty.error.code == env_pb.ERROR_CODE_INVALID_ARGUMENT
    for session_id in (first, second):
        await stop_session(nats_client, envhost.host_id, session_id)


async def test_without_a_recorder_saving_answers_unavailable_naming_it(
        envhost: EnvHostProcess, nats_client: Any, open_link: Any) -> None:
    session_id = new_session_id()
    await start(nats_client, envhost.host_id, session_id)
    link = await open_link(envhost.step_address, session_id)
    await link.request(reset(seed=1))
    for request in (save("x"), restore_saved("x")):
        response = await link.request(request)
        assert response.error.code == env_pb.ERROR_CODE_UNAVAILABLE
        assert "recorder" in response.error.message and "platform.recorder.snapshots." in response.error.message
    assert (await link.request(step(0))).WhichOneof("result") == "step"  # the session goes on
    await stop_session(nats_client, envhost.host_id, session_id)


async def test_a_label_with_control_or_bidi_characters_is_refused_before_saving(
        envhost: EnvHostProcess, nats_client: Any, open_link: Any, store: SnapshotStoreStandIn) -> None:
    """The stream's protobuf path reaches the env host without the gateway's schema: the label
    rule (platform_contracts.names) is checked here too, and nothing is saved."""
    session_id = new_session_id()
    await start(nats_client, envhost.host_id, session_id)
    link = await open_link(envhost.step_address, session_id)
    await link.request(reset(seed=1))
    for label, code_point in (("a\x00b", "U+0000"), ("fine\u202eenif", "U+202E"), ("x" * 201, "201 characters")):
        response = await link.request(save(label))
        assert response.error.code == env_pb.ERROR_CODE_INVALID_ARGUMENT, response
        assert "label" in response.error.message and code_point in response.error.message
    assert (await link.request(save("before the swing: ok"))).WhichOneof("result") == "save_snapshot"
    await stop_session(nats_client, envhost.host_id, session_id)


LOCKED_ENV = '''
import threading
import gymnasium as gym
import numpy as np


class Locked(gym.Env):
    observation_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self):
        self.lock = threading.Lock()  # cannot be pickled

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(1, np.float32), {}

    def step(self, action):
        return np.zeros(1, np.float32), 0.0, False, False, {}


def make(**kwargs):
    return Locked()
'''


async def test_an_environment_that_cannot_be_pickled_cannot_be_saved(
        tmp_path: Path, envhost: EnvHostProcess, nats_client: Any, open_link: Any,
        store: SnapshotStoreStandIn) -> None:
    (tmp_path / "locked_env.py").write_text(LOCKED_ENV)
    entry = control_pb.CatalogEntry(id="locked", factory="locked_env:make", path=str(tmp_path))
    session_id = new_session_id()
    await start(nats_client, envhost.host_id, session_id, entry=entry)
    link = await open_link(envhost.step_address, session_id)
    await link.request(reset(seed=1))
    response = await link.request(save("x"))
    assert response.error.code == env_pb.ERROR_CODE_UNIMPLEMENTED
    assert response.error.message.startswith(f"session {session_id} (locked) cannot be saved: ")
    assert store.saved == {}
    await stop_session(nats_client, envhost.host_id, session_id)


async def test_sub_environments_save_and_restore_inside_a_batch(
        envhost: EnvHostProcess, nats_client: Any, js: Any, open_link: Any, store: SnapshotStoreStandIn) -> None:
    session_id = new_session_id()
    await start(nats_client, envhost.host_id, session_id, record=True, num_envs=3)
    link = await open_link(envhost.step_address, session_id)
    await link.request(batch((0, reset(seed=0)), (1, reset(seed=1)), (2, reset(seed=2))))
    stepped = await link.request(batch((1, step(1)), (1, save("sub 1")), (0, step(0)), (7, save("none"))))
    step_1, saved, step_0, missing = stepped.batch.responses
    assert step_1.WhichOneof("result") == "step" and step_0.WhichOneof("result") == "step"
    assert saved.WhichOneof("result") == "save_snapshot", saved
    assert missing.error.code == env_pb.ERROR_CODE_INVALID_ARGUMENT and "sub-environment 7" in missing.error.message
    snapshot = saved.save_snapshot.saved
    assert (snapshot.session_id, snapshot.seq) == (session_id, 2)

    restored = await link.request(batch((2, restore_saved(snapshot.id))))
    [answer] = restored.batch.responses
    assert answer.restore_saved.observation == step_1.step.observation  # sub-environment 1's moment, in 2
    assert answer.restore_saved.HasField("seconds") and answer.restore_saved.seconds > 0

    messages = await batch_messages(js, session_id, 4)
    events = [e for m in messages for e in parse_batch(m.data)]
    restore_event = events[-1]
    assert restore_event.session_id == subjects.sub_session_id(session_id, 2)
    assert restore_event.WhichOneof("kind") == "restore" and (restore_event.seq, restore_event.episode) == (2, 1)
    await stop_session(nats_client, envhost.host_id, session_id)


async def test_the_recorder_not_answering_in_time_or_a_state_too_large_are_clear_errors(
        nats_client: Any) -> None:
    class Described:
        session_id, env_id, kwargs_json, num_envs = "s1", "big", "{}", 1
        options = SessionOptions(env_id="big")

        def builder(self, index: int = 0) -> None:
            return None

    async def export(request: env_pb.EnvRequest) -> env_pb.EnvResponse:
        return env_pb.EnvResponse(id=request.id, export_state=env_pb.ExportStateResponse(state=state, format="pickle"))

    silent = await nats_client.subscribe(subjects.RECORDER_SAVE_SNAPSHOT)  # takes requests, never answers
    try:
        state = b"x" * 1000
        slow = await SavedSnapshots(nats_client, timeout=0.3).save(Described(), save("x"), export)  # type: ignore[arg-type]
        assert slow.error.code == env_pb.ERROR_CODE_UNAVAILABLE
        assert slow.error.message == ("session s1 (big): the snapshot was not saved: recorder unavailable: no answer "
                                      "on platform.recorder.snapshots.save within 0.3 s")
        state = b"x" * nats_client.max_payload
        large = await SavedSnapshots(nats_client, timeout=0.3).save(Described(), save("x"), export)  # type: ignore[arg-type]
        assert large.error.code == env_pb.ERROR_CODE_FAILED_PRECONDITION
        size, limit = f"{len(state):,}", f"{nats_client.max_payload:,}"
        assert f"its state is {size} bytes" in large.error.message and f"({limit} bytes" in large.error.message
        assert "max_payload" in large.error.message
    finally:
        await silent.unsubscribe()
