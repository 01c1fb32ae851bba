"""Sessions over REST: the catalog, create / get / list / close, and the errors around them."""

from __future__ import annotations

from simulusion.control.v1 import control_pb2 as ctl


async def test_envs_lists_the_catalog(gateway, broker) -> None:
    response = await gateway.http.get("/v0/envs")
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 1
    assert body["data"][0]["id"] == "cartpole"
    assert body["data"][0]["gymnasium_id"] == "CartPole-v1"


async def test_create_get_list_delete(gateway, broker) -> None:
    response = await gateway.http.post("/v0/sessions", json={"env_id": "cartpole", "kwargs": {"a": 1}, "record": True})
    assert response.status_code == 201, response.text
    session = response.json()
    assert session["env_id"] == "cartpole"
    assert session["kwargs"] == {"a": 1}
    assert session["record"] is True
    assert session["state"] == "running"
    assert session["created_at"] > 0 and session["last_active_at"] > 0
    assert session["action_space"]["type"] == "discrete" and session["action_space"]["n"] == 2
    assert session["observation_space"]["repr"].startswith("Box(")
    assert session["observation_space"]["shape"] == [4]
    assert isinstance(session["metadata"], dict)

    got = (await gateway.http.get(f"/v0/sessions/{session['id']}")).json()
    assert got["id"] == session["id"] and got["state"] == "running"

    listed = (await gateway.http.get("/v0/sessions")).json()
    assert session["id"] in [s["id"] for s in listed["data"]]

    closed = await gateway.http.delete(f"/v0/sessions/{session['id']}")
    assert closed.status_code == 200
    assert closed.json()["state"] == "closed"
    assert closed.json()["reason"] == "closed by the client"
    listed = (await gateway.http.get("/v0/sessions")).json()
    assert session["id"] not in [s["id"] for s in listed["data"]]
    listed = (await gateway.http.get("/v0/sessions", params={"include_closed": True})).json()
    assert session["id"] in [s["id"] for s in listed["data"]]


async def test_the_create_options_reach_the_broker_whole_and_get_shows_them(gateway, broker) -> None:
    body = {"env_id": "cartpole", "kwargs": {"a": 1}, "record": True, "jpeg_quality": 33, "record_frames": True,
            "num_envs": 2, "auto_reset": True}
    response = await gateway.http.post("/v0/sessions", json=body)
    assert response.status_code == 201, response.text
    session_id = response.json()["id"]
    stored = broker.sessions[session_id].options  # what the gateway sent
    assert (stored.jpeg_quality, stored.record_frames, stored.num_envs, stored.auto_reset) == (33, True, 2, True)
    got = (await gateway.http.get(f"/v0/sessions/{session_id}")).json()
    assert {name: got[name] for name in body} == body
    assert (got["life"], got["frame_every"], got["max_frames"]) == (None, None, None)


async def test_unknown_env_is_404_with_the_brokers_message(gateway, broker) -> None:
    response = await gateway.http.post("/v0/sessions", json={"env_id": "nope"})
    assert response.status_code == 404
    assert response.json()["detail"] == "unknown env 'nope'; known: cartpole"


async def test_unknown_session_is_404(gateway, broker) -> None:
    assert (await gateway.http.get("/v0/sessions/nope")).status_code == 404
    response = await gateway.http.post("/v0/sessions/nope/step", json={"action": 0})
    assert response.status_code == 404
    assert "nope" in response.json()["detail"]
    assert (await gateway.http.delete("/v0/sessions/nope")).status_code == 404


async def test_closed_session_is_410_with_its_reason(gateway, broker) -> None:
    info = broker.add(state=ctl.SESSION_STATE_CLOSED, reason="idle for 1800 s")
    response = await gateway.http.post(f"/v0/sessions/{info.id}/reset", json={})
    assert response.status_code == 410
    assert response.json()["detail"] == f"session {info.id} is closed (idle for 1800 s)"


async def test_session_closed_through_the_gateway_then_used_is_410(gateway, broker) -> None:
    session = (await gateway.http.post("/v0/sessions", json={"env_id": "cartpole"})).json()
    assert (await gateway.http.post(f"/v0/sessions/{session['id']}/reset", json={"seed": 1})).status_code == 200
    await gateway.http.delete(f"/v0/sessions/{session['id']}")
    response = await gateway.http.post(f"/v0/sessions/{session['id']}/step", json={"action": 0})
    assert response.status_code == 410
    assert "is closed (closed by the client)" in response.json()["detail"]


async def test_crashed_session_is_410_with_its_log_tail(gateway, broker) -> None:
    info = broker.add(state=ctl.SESSION_STATE_CRASHED, reason="exit code -9", log_tail="MemoryError\n")
    response = await gateway.http.post(f"/v0/sessions/{info.id}/step", json={"action": 0})
    assert response.status_code == 410
    assert response.json()["log_tail"] == "MemoryError\n"
    assert "crashed (exit code -9)" in response.json()["detail"]


async def test_broker_down_is_503(gateway) -> None:
    # No stand-in broker subscribed: NATS answers "no responders".
    for response in (
        await gateway.http.get("/v0/envs"),
        await gateway.http.post("/v0/sessions", json={"env_id": "cartpole"}),
        await gateway.http.get("/v0/sessions/abc"),
        await gateway.http.post("/v0/sessions/abc/step", json={"action": 0}),
    ):
        assert response.status_code == 503
        assert response.json()["detail"].startswith("broker unavailable")


async def test_create_body_is_validated(gateway, broker) -> None:
    response = await gateway.http.post("/v0/sessions", json={"kwargs": {}})
    assert response.status_code == 422
    assert "env_id" in response.json()["detail"]
