"""The API token: every /v0 route and the WebSocket need it once PLATFORM_API_TOKEN is set."""

from __future__ import annotations

import asyncio

import pytest
from simulusion.env.v1 import environment_pb2 as env_pb
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

TOKEN = "s3cret-token"


async def test_rest_needs_the_token(start_gateway, broker) -> None:
    gateway = await start_gateway(api_token=TOKEN)
    missing = await gateway.http.get("/v0/envs")
    assert missing.status_code == 401
    assert "Authorization: Bearer" in missing.json()["detail"]
    wrong = await gateway.http.get("/v0/envs", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    assert wrong.json()["detail"] == "the API token is not valid"
    good = await gateway.http.get("/v0/envs", headers={"Authorization": f"Bearer {TOKEN}"})
    assert good.status_code == 200
    created = await gateway.http.post("/v0/sessions", json={"env_id": "cartpole"})
    assert created.status_code == 401
    # The docs stay open.
    assert (await gateway.http.get("/openapi.json")).status_code == 200


async def test_websocket_needs_the_token(start_gateway, broker) -> None:
    gateway = await start_gateway(api_token=TOKEN)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    sid = (await gateway.http.post("/v0/sessions", json={"env_id": "cartpole"}, headers=headers)).json()["id"]
    url = f"{gateway.ws_url}/v0/sessions/{sid}/stream"
    with pytest.raises(InvalidStatus) as refused:
        async with connect(url):
            pass
    assert refused.value.response.status_code == 401
    assert b"token" in refused.value.response.body
    with pytest.raises(InvalidStatus) as refused:
        async with connect(f"{url}?token=nope"):
            pass
    assert refused.value.response.status_code == 401

    for ws_connect in (connect(f"{url}?token={TOKEN}"), connect(url, additional_headers=headers)):
        async with ws_connect as ws:
            await ws.send(env_pb.EnvRequest(id=1, spec=env_pb.SpecRequest()).SerializeToString())
            response = env_pb.EnvResponse.FromString(await asyncio.wait_for(ws.recv(), 10))
            assert response.spec.action_space.discrete.n == 2


async def test_no_token_configured_means_open(gateway, broker) -> None:
    assert (await gateway.http.get("/v0/envs")).status_code == 200


async def test_a_missing_token_is_a_401_in_the_error_shape(start_gateway, broker) -> None:
    gateway = await start_gateway(api_token=TOKEN)
    missing = await gateway.http.get("/v0/sessions")
    assert missing.status_code == 401 and missing.headers["www-authenticate"] == "Bearer"
    assert missing.json()["code"] == "unauthenticated"


async def test_openapi_declares_the_bearer_scheme_only_with_a_token(start_gateway, broker) -> None:
    open_gateway = await start_gateway()
    document = (await open_gateway.http.get("/openapi.json")).json()
    assert "securitySchemes" not in document.get("components", {})
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            assert "security" not in operation, (method, path)
            assert "401" not in operation["responses"], (method, path)
            assert all(p["name"].lower() != "authorization" for p in operation.get("parameters", ())), path

    signed = (await (await start_gateway(api_token=TOKEN)).http.get("/openapi.json")).json()
    assert signed["components"]["securitySchemes"]["HTTPBearer"] == {
        "type": "http", "scheme": "bearer", "description": "an API token (PLATFORM_API_TOKEN, or with PLATFORM_AUTH=token "
        "one from /v0/tokens or PLATFORM_ADMIN_TOKEN)"}
    for path, operations in signed["paths"].items():
        for method, operation in operations.items():
            if path == "/v0/sign-in":  # how to sign in: asked before there is a token
                assert "security" not in operation
            elif path.startswith("/v0/"):
                assert operation["security"] == [{"HTTPBearer": []}], (method, path)
                assert "401" in operation["responses"], (method, path)
            else:  # /healthz
                assert "security" not in operation, (method, path)
