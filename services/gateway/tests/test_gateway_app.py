"""The app around the routes: docs, recordings, traces, NATS failures, the process itself."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

import httpx
from fastapi import FastAPI
from platform_contracts import limits, subjects
from platform_contracts.recorder_json import message_from_json
from simulusion.control.v1.control_pb2 import ControlError
from simulusion.recorder.v1 import recorder_pb2 as rec
from platform_testing.nats_server import NatsServer
from platform_gateway.api import errors
from platform_testing.ports import free_port

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"


async def test_docs_and_openapi(gateway) -> None:
    docs = await gateway.http.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()
    schema = (await gateway.http.get("/openapi.json")).json()
    paths = schema["paths"]
    for path in ("/v0/envs", "/v0/sessions", "/v0/sessions/{session_id}", "/v0/sessions/{session_id}/step",
                 "/v0/sessions/{session_id}/reset", "/v0/sessions/{session_id}/render", "/v0/recordings",
                 "/v0/recordings/{recording_id}"):
        assert path in paths, path
    assert "SessionPublic" in schema["components"]["schemas"]


async def test_openapi_states_the_limits_the_server_enforces(gateway) -> None:
    schemas = (await gateway.http.get("/openapi.json")).json()["components"]["schemas"]
    seed = next(option for option in schemas["ResetBody"]["properties"]["seed"]["anyOf"] if "type" in option
                and option["type"] == "integer")
    assert seed["minimum"] == limits.MIN_SEED and seed["exclusiveMaximum"] == limits.MAX_SEED + 1
    hold = schemas["HoldBody"]
    assert hold["properties"]["steps"]["maximum"] == limits.MAX_HOLD_STEPS
    assert {"properties": {"steps": {"maximum": limits.MAX_HOLD_STEPS_WITH_FRAMES}}} in hold["anyOf"]


async def test_starlettes_own_errors_answer_in_the_gateways_shape(gateway, broker) -> None:
    unknown = await gateway.http.get("/v0/nothing-here")
    assert unknown.status_code == 404
    assert unknown.json() == {"detail": "no route GET /v0/nothing-here (the routes are in /docs)",
                              "code": "not_found"}
    wrong_method = await gateway.http.put("/v0/sessions/s-1")
    assert wrong_method.status_code == 405 and wrong_method.json()["code"] == "method_not_allowed"
    assert wrong_method.headers["allow"] == "DELETE, GET"  # every route of the path, not only the first
    not_utf8 = await gateway.http.post("/v0/sessions", content=b'{"env_id": "\xff\xfe"}',
                                       headers={"content-type": "application/json"})
    assert not_utf8.status_code == 422, not_utf8.text
    assert not_utf8.json()["code"] == "invalid_argument" and "not valid JSON" in not_utf8.json()["detail"]


async def test_bodies_are_strict_and_stored_ids_short(gateway, broker) -> None:
    for path, body in (("/v0/sessions", {"env_id": "cartpole", "record": 1}),
                       ("/v0/sessions/s-1/reset", {"seed": False}), ("/v0/sessions/s-1/reset", {"seed": "3"}),
                       ("/v0/sessions/s-1/hold", {"action": 0, "steps": True})):
        response = await gateway.http.post(path, json=body)
        assert response.status_code == 422, (path, body, response.text)
    too_long = "r" * (limits.MAX_STORED_ID_LENGTH + 1)  # a folder name of the recorder's, too long
    for path in (f"/v0/recordings/{too_long}", f"/v0/snapshots/{too_long}"):
        response = await gateway.http.get(path)
        assert response.status_code == 422 and "at most 63 characters" in response.json()["detail"], path


async def test_an_unexpected_exception_is_a_json_500() -> None:
    app = FastAPI()
    errors.install(app)

    @app.get("/broken")
    async def broken() -> None:
        raise RuntimeError("a bug")

    transport = httpx.ASGITransport(app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as http:
        response = await http.get("/broken")
    assert response.status_code == 500
    assert response.json() == {"detail": "GET /broken failed inside the gateway (RuntimeError): see its log",
                               "code": "internal"}


async def _stand_in_recorder(nc):
    """A stand-in for the recorder (another engineer's service): its request/reply messages."""
    episodes = [{"index": i, "file": f"episode-{i:06d}.npz", "length": 3} for i in range(2)]
    recordings = {"r1": message_from_json({"id": "r1", "session_id": "s1", "env_id": "cartpole",
                                           "status": "closed", "episodes": episodes}, rec.RecordingMeta())}

    async def list_(msg) -> None:
        query = rec.ListRecordingsRequest.FromString(msg.data)
        found = [rec.RecordingSummary(meta=m, episode_count=len(m.episodes)) for m in recordings.values()
                 if query.env_id in ("", m.env_id)]
        await msg.respond(rec.ListRecordingsReply(recordings=found).SerializeToString())

    async def get(msg) -> None:
        rid = rec.GetRecordingRequest.FromString(msg.data).id
        if rid in recordings:
            reply = rec.GetRecordingReply(recording=recordings[rid])
        else:
            reply = rec.GetRecordingReply(error=ControlError(code="not_found", message=f"no recording {rid!r}"))
        await msg.respond(reply.SerializeToString())

    return [await nc.subscribe(subjects.RECORDER_LIST_RECORDINGS, cb=list_),
            await nc.subscribe(subjects.RECORDER_GET_RECORDING, cb=get)]


async def test_recordings(gateway, nats_client) -> None:
    assert (await gateway.http.get("/v0/recordings")).status_code == 503  # no recorder yet
    subs = await _stand_in_recorder(nats_client)
    try:
        listed = (await gateway.http.get("/v0/recordings")).json()
        assert listed["count"] == 1 and listed["data"][0]["id"] == "r1"
        assert (await gateway.http.get("/v0/recordings", params={"env_id": "other"})).json()["count"] == 0
        got = await gateway.http.get("/v0/recordings/r1")
        assert got.status_code == 200 and [e["index"] for e in got.json()["episodes"]] == [0, 1]
        missing = await gateway.http.get("/v0/recordings/r9")
        assert missing.status_code == 404 and missing.json()["detail"] == "no recording 'r9'"
    finally:
        for sub in subs:
            await sub.unsubscribe()


async def test_trace_context_reaches_nats_and_the_env_host(gateway, broker, dead_env_host) -> None:
    headers = {"traceparent": TRACEPARENT}
    assert (await gateway.http.get("/v0/envs", headers=headers)).status_code == 200
    assert TRACE_ID in broker.headers[-1]["traceparent"]
    info = broker.add(address=dead_env_host.address)
    await gateway.http.post(f"/v0/sessions/{info.id}/step", json={"action": 0}, headers=headers)
    request = dead_env_host.requests[-1]
    assert TRACE_ID in request.trace_context["traceparent"]
    assert TRACE_ID in dead_env_host.metadata[-1]["traceparent"]


async def test_nats_down_while_running_is_503(start_gateway, broker, tmp_path) -> None:
    # A NATS server of this test's own, stopped under the running gateway.
    server = NatsServer(store_dir=tmp_path / "nats").start()
    try:
        gateway = await start_gateway(nats_url=server.url)
        server.stop()
        await asyncio.sleep(0.2)
        start = time.monotonic()
        response = await gateway.http.get("/v0/envs")
        assert response.status_code == 503
        assert "NATS" in response.json()["detail"]
        assert time.monotonic() - start < 5
    finally:
        server.stop()


def test_unreachable_nats_at_start_exits_with_one_line() -> None:
    env = dict(os.environ, PLATFORM_NATS_URL=f"nats://127.0.0.1:{free_port()}", PLATFORM_NATS_CONNECT_TIMEOUT="2")
    result = subprocess.run(
        [sys.executable, "-m", "platform_gateway"], check=False, env=env, capture_output=True, text=True, timeout=30
    )
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "cannot connect to NATS" in lines[0]


def test_the_process_serves_and_stops_on_sigterm(nats_server) -> None:
    port = free_port()
    env = dict(os.environ, PLATFORM_NATS_URL=nats_server.url, PLATFORM_PORT=str(port))
    process = subprocess.Popen([sys.executable, "-m", "platform_gateway"], env=env, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                response = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
                break
            except httpx.TransportError:
                assert process.poll() is None, process.stderr.read() if process.stderr else ""
                assert time.monotonic() < deadline, "the gateway did not start"
                time.sleep(0.1)
        assert response.json() == {"ok": True, "nats": "connected"}
        process.terminate()
        assert process.wait(15) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
