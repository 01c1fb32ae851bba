"""GET /v0/sessions/{id}/world-changes: the env host's answer as JSON, 404 for an unknown session,
410 for one that ended (saying where a recorded session keeps its changes).

The env host is a stand-in (gRPC, the environment protocol) answering WorldChangesRequest as the
real one does from its log (services/envhost tests it there; tests/test_e2e_world_changes.py
with every service).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from simulusion.control.v1 import control_pb2 as ctl
from simulusion.env.v1 import environment_pb2 as env_pb

TIMELINE = [{"at": 3, "change": "mass", "body": "torso", "scale": 2.0}]
APPLIED = [{**TIMELINE[0], "index": 0, "session_step": 3, "seq": 5, "time": 1700000000.5}]


async def _world_changes_host() -> tuple[Any, str, list[env_pb.EnvRequest]]:
    """A gRPC env host stand-in that answers WorldChangesRequest with TIMELINE and APPLIED."""
    seen: list[env_pb.EnvRequest] = []

    async def connect(request_iterator: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        async for data in request_iterator:
            request = env_pb.EnvRequest.FromString(data)
            seen.append(request)
            response = env_pb.EnvResponse(id=request.id)
            if request.WhichOneof("command") == "world_changes":
                response.world_changes.timeline_json = json.dumps(TIMELINE)
                response.world_changes.applied_json.extend(json.dumps(a) for a in APPLIED)
            else:
                response.error.code = env_pb.ERROR_CODE_UNIMPLEMENTED
            yield response.SerializeToString()

    server = grpc.aio.server()
    handler = grpc.method_handlers_generic_handler(
        "simulusion.env.v1.Environment", {"Connect": grpc.stream_stream_rpc_method_handler(connect)})
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, f"127.0.0.1:{port}", seen


@pytest.fixture
async def host_and_broker(start_broker: Any) -> AsyncIterator[tuple[Any, list[env_pb.EnvRequest]]]:
    """The stand-in env host, and a stand-in broker whose sessions run on it."""
    server, address, seen = await _world_changes_host()
    yield await start_broker(address, env_pb.SpecResponse(env_id="CartPole-v1")), seen
    await server.stop(None)


async def test_a_running_session_lists_its_timeline_and_applied_changes(gateway, host_and_broker) -> None:
    broker, seen = host_and_broker
    info = broker.add()
    response = await gateway.http.get(f"/v0/sessions/{info.id}/world-changes")
    assert response.status_code == 200, response.text
    assert response.json() == {"session_id": info.id, "timeline": TIMELINE, "applied": APPLIED}
    assert [r.WhichOneof("command") for r in seen] == ["world_changes"]


async def test_an_unknown_session_is_404(gateway, host_and_broker) -> None:
    response = await gateway.http.get("/v0/sessions/nope/world-changes")
    assert response.status_code == 404, response.text
    assert response.json()["code"] == "not_found" and "nope" in response.json()["detail"]


@pytest.mark.parametrize("state", [ctl.SESSION_STATE_CLOSED, ctl.SESSION_STATE_CRASHED])
async def test_an_ended_session_is_410_pointing_to_its_recording(gateway, host_and_broker, state: int) -> None:
    broker, seen = host_and_broker
    info = broker.add(state=state, reason="closed by the client")
    response = await gateway.http.get(f"/v0/sessions/{info.id}/world-changes")
    assert response.status_code == 410, response.text
    body = response.json()
    assert body["code"] == "gone"
    assert f"GET /v0/recordings/{info.id}" in body["detail"] and "world_changes" in body["detail"]
    assert not seen  # the env host was not asked


async def test_the_route_and_its_schema_are_in_the_openapi_document(gateway) -> None:
    document = (await gateway.http.get("/openapi.json")).json()
    operation = document["paths"]["/v0/sessions/{session_id}/world-changes"]["get"]
    assert operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/WorldChangesPublic")
    assert {"404", "410"} <= set(operation["responses"])
    schema = document["components"]["schemas"]["WorldChangesPublic"]
    assert set(schema["required"]) == {"session_id", "timeline", "applied"}
