"""The saved snapshot API of the recorder running in-process on a real nats-server."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from google.protobuf.message import Message
from platform_contracts import subjects
from platform_local.nats_process import MAX_PAYLOAD
from platform_recorder.snapshots.snapshot_store import SavedSnapshotStore
from simulusion.control.v1 import control_pb2
from simulusion.env.v1 import environment_pb2 as env_pb


async def ask(nc: Any, subject: str, request: Message | bytes, reply_type: type[Message]) -> Any:
    data = request if isinstance(request, bytes) else request.SerializeToString()
    return reply_type.FromString((await nc.request(subject, data, timeout=20)).data)


def save_request(state: bytes, env_id: str = "CartPole-v1", session_id: str = "s-1") -> Any:
    snapshot = env_pb.SavedSnapshot(label="mid-swing", session_id=session_id, env_id=env_id, kwargs_json="{}", seq=7)
    return control_pb2.SaveSnapshotRequest(snapshot=snapshot, state=state, format="pickle")


async def test_a_5_mb_state_round_trips_through_nats(
    recorder_js: tuple[Any, Any], recorder_service: Any, tmp_path: Path
) -> None:
    nc, _ = recorder_js
    assert nc.max_payload == MAX_PAYLOAD  # the test server runs with the platform's config
    state = os.urandom(5 * 1024 * 1024)
    reply = await ask(nc, subjects.RECORDER_SAVE_SNAPSHOT, save_request(state), control_pb2.SaveSnapshotReply)
    assert not reply.HasField("error"), reply.error
    saved = reply.snapshot
    assert saved.id.startswith("snap-") and saved.size_bytes == len(state) and saved.created_at > 0
    assert (saved.label, saved.seq, saved.env_id) == ("mid-swing", 7, "CartPole-v1")
    assert (tmp_path / "recordings" / "snapshots" / saved.id / "state.bin").read_bytes() == state
    got = await ask(
        nc,
        subjects.RECORDER_GET_SNAPSHOT,
        control_pb2.GetSavedSnapshotRequest(id=saved.id, with_state=True),
        control_pb2.GetSavedSnapshotReply,
    )
    assert not got.HasField("error") and got.snapshot == saved and got.format == "pickle"
    assert got.state == state
    plain = await ask(
        nc, subjects.RECORDER_GET_SNAPSHOT, control_pb2.GetSavedSnapshotRequest(id=saved.id),
        control_pb2.GetSavedSnapshotReply,
    )
    assert plain.snapshot == saved and plain.state == b""


async def test_list_and_errors(recorder_js: tuple[Any, Any], recorder_service: Any, tmp_path: Path) -> None:
    nc, _ = recorder_js
    ids = []
    for env_id, session_id in (("CartPole-v1", "s-1"), ("Pong", "s-2"), ("CartPole-v1", "s-2")):
        reply = await ask(
            nc, subjects.RECORDER_SAVE_SNAPSHOT, save_request(b"state", env_id, session_id),
            control_pb2.SaveSnapshotReply,
        )
        ids.append(reply.snapshot.id)
    listing = await ask(
        nc, subjects.RECORDER_LIST_SNAPSHOTS, control_pb2.ListSavedSnapshotsRequest(),
        control_pb2.ListSavedSnapshotsReply,
    )
    assert [s.id for s in listing.snapshots] == ids[::-1]  # newest first
    listing = await ask(
        nc, subjects.RECORDER_LIST_SNAPSHOTS, control_pb2.ListSavedSnapshotsRequest(env_id="CartPole-v1"),
        control_pb2.ListSavedSnapshotsReply,
    )
    assert [s.id for s in listing.snapshots] == [ids[2], ids[0]]
    listing = await ask(
        nc, subjects.RECORDER_LIST_SNAPSHOTS, control_pb2.ListSavedSnapshotsRequest(session_id="s-2"),
        control_pb2.ListSavedSnapshotsReply,
    )
    assert [s.id for s in listing.snapshots] == [ids[2], ids[1]]

    async def get_error(request: Message | bytes) -> Any:
        reply = await ask(nc, subjects.RECORDER_GET_SNAPSHOT, request, control_pb2.GetSavedSnapshotReply)
        assert reply.HasField("error") and not reply.state, reply
        return reply.error

    error = await get_error(control_pb2.GetSavedSnapshotRequest(id="snap-000000000000", with_state=True))
    assert error.code == "not_found" and "snap-000000000000" in error.message
    for bad in ("../recordings", "a/b", "..", ""):
        error = await get_error(control_pb2.GetSavedSnapshotRequest(id=bad))
        assert error.code == "invalid_argument", (bad, error)
    error = await get_error(b"\xff\xff not protobuf")
    assert error.code == "invalid_argument" and "GetSavedSnapshotRequest" in error.message
    for request, says in (
        (save_request(b""), "'state' is empty"),
        (control_pb2.SaveSnapshotRequest(state=b"x", format="pickle"), "'snapshot'"),
        (control_pb2.SaveSnapshotRequest(snapshot=save_request(b"").snapshot, state=b"x"), "'format'"),
    ):
        reply = await ask(nc, subjects.RECORDER_SAVE_SNAPSHOT, request, control_pb2.SaveSnapshotReply)
        assert reply.error.code == "invalid_argument" and says in reply.error.message, reply
    assert sorted(p.name for p in (tmp_path / "recordings" / "snapshots").iterdir()) == sorted(ids)


async def test_a_state_too_large_to_send_is_a_clear_error(
    recorder_js: tuple[Any, Any], recorder_service: Any, tmp_path: Path
) -> None:
    nc, _ = recorder_js
    # saved by another way (a larger limit then): this server cannot carry it
    store = SavedSnapshotStore(tmp_path / "recordings")
    saved = store.save(save_request(b"").snapshot, b"\0" * (MAX_PAYLOAD + 1), "pickle")
    reply = await ask(
        nc, subjects.RECORDER_GET_SNAPSHOT, control_pb2.GetSavedSnapshotRequest(id=saved.id, with_state=True),
        control_pb2.GetSavedSnapshotReply,
    )
    assert reply.error.code == "failed_precondition" and "max payload" in reply.error.message
    assert str(MAX_PAYLOAD + 1) in reply.error.message
    described = await ask(
        nc, subjects.RECORDER_GET_SNAPSHOT, control_pb2.GetSavedSnapshotRequest(id=saved.id),
        control_pb2.GetSavedSnapshotReply,
    )
    assert described.snapshot == saved
