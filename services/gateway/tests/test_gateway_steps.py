"""Environment commands over REST, on a real environment server (CartPole)."""

from __future__ import annotations

import simplejpeg
from platform_gateway.json_views import restore_json
from simulusion.control.v1 import control_pb2 as ctl
from simulusion.env.v1 import environment_pb2 as env_pb


async def _session(gateway) -> str:
    response = await gateway.http.post("/v0/sessions", json={"env_id": "cartpole"})
    assert response.status_code == 201, response.text
    return response.json()["id"]


async def test_reset_and_step(gateway, broker) -> None:
    sid = await _session(gateway)
    reset = await gateway.http.post(f"/v0/sessions/{sid}/reset", json={"seed": 42})
    assert reset.status_code == 200, reset.text
    observation = reset.json()["observation"]
    assert len(observation) == 4 and all(isinstance(x, float) for x in observation)
    assert reset.json()["info"] == {}
    again = await gateway.http.post(f"/v0/sessions/{sid}/reset", json={"seed": 42})
    assert again.json()["observation"] == observation  # same seed, same start

    step = await gateway.http.post(f"/v0/sessions/{sid}/step", json={"action": 1, "agent": {"policy": "test"}})
    assert step.status_code == 200, step.text
    body = step.json()
    assert body["reward"] == 1.0
    assert body["terminated"] is False and body["truncated"] is False
    assert len(body["observation"]) == 4 and body["observation"] != observation


async def test_reset_without_body(gateway, broker) -> None:
    sid = await _session(gateway)
    response = await gateway.http.post(f"/v0/sessions/{sid}/reset")
    assert response.status_code == 200, response.text
    assert len(response.json()["observation"]) == 4


async def test_invalid_action_is_422_naming_the_space(gateway, broker) -> None:
    sid = await _session(gateway)
    await gateway.http.post(f"/v0/sessions/{sid}/reset", json={})
    response = await gateway.http.post(f"/v0/sessions/{sid}/step", json={"action": [0.5, 1]})
    assert response.status_code == 422
    assert "Discrete(2)" in response.json()["detail"]
    # Out of range: the environment server checks it against the action space.
    response = await gateway.http.post(f"/v0/sessions/{sid}/step", json={"action": 7})
    assert response.status_code == 422
    assert "Discrete(2)" in response.json()["detail"]


async def test_malformed_json_is_422_saying_what_to_fix(gateway, broker) -> None:
    sid = await _session(gateway)
    response = await gateway.http.post(
        f"/v0/sessions/{sid}/step", content=b"{action: 1", headers={"content-type": "application/json"}
    )
    assert response.status_code == 422
    assert "JSON" in response.json()["detail"]
    response = await gateway.http.post(f"/v0/sessions/{sid}/step", json={"actoin": 1})
    assert response.status_code == 422
    assert "action" in response.json()["detail"]


async def test_snapshot_restore_and_render(gateway, broker) -> None:
    sid = await _session(gateway)
    await gateway.http.post(f"/v0/sessions/{sid}/reset", json={"seed": 3})
    handle = (await gateway.http.post(f"/v0/sessions/{sid}/snapshot")).json()["handle"]
    first = (await gateway.http.post(f"/v0/sessions/{sid}/step", json={"action": 0})).json()
    restored = await gateway.http.post(f"/v0/sessions/{sid}/restore", json={"handle": handle})
    assert restored.status_code == 200, restored.text
    restore_s = restored.json()["restore_s"]  # the environment server's own time to restore
    assert isinstance(restore_s, float) and 0 < restore_s < 10
    second = (await gateway.http.post(f"/v0/sessions/{sid}/step", json={"action": 0})).json()
    assert second["observation"] == first["observation"]

    missing = await gateway.http.post(f"/v0/sessions/{sid}/restore", json={"handle": "nope"})
    assert missing.status_code == 404

    frame = await gateway.http.get(f"/v0/sessions/{sid}/render")
    assert frame.status_code == 200
    assert frame.headers["content-type"] == "image/jpeg"
    assert simplejpeg.decode_jpeg(frame.content).ndim == 3


async def test_step_on_a_fresh_instance_is_409(gateway, broker, new_env_server) -> None:
    info = broker.add(address=new_env_server().address)  # a server of its own, never reset
    response = await gateway.http.post(f"/v0/sessions/{info.id}/step", json={"action": 0})
    assert response.status_code == 409
    assert "reset" in response.json()["detail"]


async def test_render_on_a_fresh_instance_is_409_saying_to_reset(gateway, broker, new_env_server) -> None:
    info = broker.add(address=new_env_server(kwargs={"render_mode": "rgb_array"}).address)
    response = await gateway.http.get(f"/v0/sessions/{info.id}/render")
    assert response.status_code == 409, response.text
    assert response.json()["code"] == "failed_precondition"
    assert "render before the first reset: call reset first" in response.json()["detail"]
    assert (await gateway.http.post(f"/v0/sessions/{info.id}/reset", json={"seed": 0})).status_code == 200
    assert (await gateway.http.get(f"/v0/sessions/{info.id}/render")).status_code == 200


async def test_a_seed_out_of_range_is_a_422_naming_the_range(gateway, broker) -> None:
    sid = await _session(gateway)
    for seed, bound in ((-356576458973957006032896, "greater than or equal to 0"), (-1, "greater than or equal to 0"),
                        (2**63, "less than 9223372036854775808")):
        response = await gateway.http.post(f"/v0/sessions/{sid}/reset", json={"seed": seed})
        assert response.status_code == 422, response.text
        assert response.json()["code"] == "invalid_argument" and "seed: Input should be" in response.text
        assert bound in response.json()["detail"]
    largest = await gateway.http.post(f"/v0/sessions/{sid}/reset", json={"seed": 2**63 - 1})
    assert largest.status_code == 200, largest.text


async def test_hold_limits_are_422s(gateway, broker) -> None:
    sid = await _session(gateway)
    await gateway.http.post(f"/v0/sessions/{sid}/reset", json={"seed": 0})
    too_many = await gateway.http.post(f"/v0/sessions/{sid}/hold", json={"action": 0, "steps": 10_001})
    assert too_many.status_code == 422 and "10000" in too_many.json()["detail"]
    framed = await gateway.http.post(f"/v0/sessions/{sid}/hold", json={"action": 0, "steps": 257})
    assert framed.status_code == 422 and "256" in framed.json()["detail"]
    plain = await gateway.http.post(f"/v0/sessions/{sid}/hold", json={"action": 0, "steps": 257, "frames": False})
    assert plain.status_code == 200, plain.text


async def test_env_host_gone_is_503_not_a_hang(gateway, broker, new_env_server) -> None:
    server = new_env_server()
    info = broker.add(address=server.address)
    assert (await gateway.http.post(f"/v0/sessions/{info.id}/reset", json={})).status_code == 200
    server.stop()
    response = await gateway.http.post(f"/v0/sessions/{info.id}/step", json={"action": 0})
    assert response.status_code == 503
    assert info.id in response.json()["detail"] and server.address in response.json()["detail"]
    # Once the broker knows the instance died, the answer is 410 with its log tail.
    info.state, info.reason, info.log_tail = ctl.SESSION_STATE_CRASHED, "env host gone", "killed\n"
    response = await gateway.http.post(f"/v0/sessions/{info.id}/step", json={"action": 0})
    assert response.status_code == 410
    assert response.json()["log_tail"] == "killed\n"


async def test_a_hung_instance_times_out_504(start_gateway, broker, silent_env_host) -> None:
    gateway = await start_gateway(env_timeout=0.5)
    info = broker.add(address=silent_env_host.address)
    response = await gateway.http.post(f"/v0/sessions/{info.id}/step", json={"action": 0})
    assert response.status_code == 504
    assert info.id in response.json()["detail"] and "0.5 s" in response.json()["detail"]
    # The late stream was dropped: the next request goes on a new one.
    await gateway.http.post(f"/v0/sessions/{info.id}/reset", json={})
    assert len(silent_env_host.metadata) == 2


def test_a_saved_snapshots_restore_answers_the_seconds_the_env_host_passed_on() -> None:
    # restore-saved needs the env host and the recorder (tests/test_e2e_saved_snapshots.py): its view here
    assert restore_json(env_pb.RestoreSavedResponse(seconds=0.75))["restore_s"] == 0.75
    assert restore_json(env_pb.RestoreSavedResponse())["restore_s"] is None  # an older environment server
    assert restore_json(env_pb.RestoreResponse(seconds=0.5))["restore_s"] == 0.5
