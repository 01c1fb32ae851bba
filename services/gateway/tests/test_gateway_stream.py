"""The WebSocket stream: binary protobuf forwarded as bytes, JSON text commands, close codes."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from platform_contracts.spaces import encode_value, space_from_proto
from simulusion.env.v1 import environment_pb2 as env_pb
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed


async def _session(gateway) -> str:
    response = await gateway.http.post("/v0/sessions", json={"env_id": "cartpole"})
    assert response.status_code == 201, response.text
    return response.json()["id"]


async def _call(ws, request: env_pb.EnvRequest) -> env_pb.EnvResponse:
    await ws.send(request.SerializeToString())
    try:
        data = await asyncio.wait_for(ws.recv(), 10)
    except ConnectionClosed as exc:
        pytest.fail(f"the stream closed instead of answering: {exc.rcvd}")
    assert isinstance(data, bytes)
    response = env_pb.EnvResponse.FromString(data)
    assert response.id == request.id
    return response


async def test_binary_spec_reset_step(gateway, broker) -> None:
    sid = await _session(gateway)
    async with connect(f"{gateway.ws_url}/v0/sessions/{sid}/stream", compression=None) as ws:
        spec = (await _call(ws, env_pb.EnvRequest(id=1, spec=env_pb.SpecRequest()))).spec
        assert spec.action_space.discrete.n == 2
        reset = await _call(ws, env_pb.EnvRequest(id=2, reset=env_pb.ResetRequest(seed=5)))
        assert reset.reset.observation.tensor.shape == [4]
        action = encode_value(1, space_from_proto(spec.action_space))
        step = await _call(ws, env_pb.EnvRequest(id=3, step=env_pb.StepRequest(action=action)))
        assert not step.HasField("error")
        assert step.step.reward == 1.0
        # A bad action answers an error and the stream stays up.
        bad = await _call(ws, env_pb.EnvRequest(id=4, step=env_pb.StepRequest(action={"discrete": 9})))
        assert bad.error.code == env_pb.ERROR_CODE_INVALID_ACTION
        again = await _call(ws, env_pb.EnvRequest(id=5, step=env_pb.StepRequest(action=action)))
        assert again.HasField("step")


async def test_binary_and_rest_interleave_on_one_session(gateway, broker) -> None:
    sid = await _session(gateway)
    async with connect(f"{gateway.ws_url}/v0/sessions/{sid}/stream", compression=None) as ws:
        await _call(ws, env_pb.EnvRequest(id=1, reset=env_pb.ResetRequest(seed=1)))

        async def ws_steps() -> None:
            for i in range(20):
                await _call(ws, env_pb.EnvRequest(id=10 + i, step=env_pb.StepRequest(action={"discrete": i % 2})))

        async def rest_steps() -> None:
            for i in range(10):
                response = await gateway.http.post(f"/v0/sessions/{sid}/step", json={"action": i % 2})
                assert response.status_code == 200, response.text

        await asyncio.wait_for(asyncio.gather(ws_steps(), rest_steps()), 30)


async def test_text_json_commands(gateway, broker) -> None:
    sid = await _session(gateway)
    async with connect(f"{gateway.ws_url}/v0/sessions/{sid}/stream") as ws:

        async def ask(message: dict) -> dict:
            await ws.send(json.dumps(message))
            answer = json.loads(await asyncio.wait_for(ws.recv(), 10))
            assert answer["id"] == message.get("id")
            return answer

        beyond = await ask({"id": "s", "op": "reset", "seed": -356576458973957006032896})
        assert beyond["error"]["status"] == 422 and beyond["error"]["field"] == "seed"
        assert "seed: Input should be greater than or equal to 0 (seed of the environment's RNG, 0 to" in (
            beyond["error"]["detail"])
        reset = await ask({"id": "a", "op": "reset", "seed": 7})
        assert len(reset["result"]["observation"]) == 4
        step = await ask({"id": 2, "op": "step", "action": 0})
        assert step["op"] == "step" and step["result"]["reward"] == 1.0
        assert step["result"]["terminated"] is False
        bad = await ask({"id": 3, "op": "step", "action": [1, 2]})
        assert bad["error"]["status"] == 422 and "Discrete(2)" in bad["error"]["detail"]
        unknown = await ask({"id": 4, "op": "jump"})
        assert unknown["error"]["status"] == 422 and "reset, step" in unknown["error"]["detail"]
        frame = await ask({"id": 5, "op": "render"})
        assert frame["result"]["frame"]["mime"] == "image/jpeg" and frame["result"]["frame"]["width"] > 0
        jpeg = await asyncio.wait_for(ws.recv(), 10)  # the frame itself follows, as a binary message
        assert isinstance(jpeg, bytes) and len(jpeg) == frame["result"]["frame"]["size"]
        handle = (await ask({"id": 6, "op": "snapshot"}))["result"]["handle"]
        restored = await ask({"id": 7, "op": "restore", "handle": handle})
        assert len(restored["result"]["observation"]) == 4
        await ws.send("{not json")
        assert "not JSON" in json.loads(await ws.recv())["error"]["detail"]


async def test_unknown_session_closes_4404(gateway, broker) -> None:
    async with connect(f"{gateway.ws_url}/v0/sessions/nope/stream") as ws:
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(ws.recv(), 10)
    assert closed.value.rcvd.code == 4404
    assert "nope" in closed.value.rcvd.reason


async def test_dead_instance_answers_then_closes_4410(gateway, broker, dead_env_host) -> None:
    info = broker.add(address=dead_env_host.address)
    async with connect(f"{gateway.ws_url}/v0/sessions/{info.id}/stream") as ws:
        response = await _call(ws, env_pb.EnvRequest(id=1, reset=env_pb.ResetRequest()))
        assert response.error.code == env_pb.ERROR_CODE_UNAVAILABLE
        assert response.error.log_tail == "Killed\n"
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(ws.recv(), 10)
    assert closed.value.rcvd.code == 4410
    assert "instance died" in closed.value.rcvd.reason
    assert len(closed.value.rcvd.reason.encode()) <= 120
    # The env host got the session's id in the metadata.
    assert dead_env_host.metadata[0]["session-id"] == info.id


async def test_dead_instance_over_rest_is_410_with_log_tail(gateway, broker, dead_env_host) -> None:
    info = broker.add(address=dead_env_host.address)
    response = await gateway.http.post(f"/v0/sessions/{info.id}/step", json={"action": 0})
    assert response.status_code == 410
    assert response.json() == {"detail": "the instance died (exit code -9)", "code": "gone", "log_tail": "Killed\n"}


async def test_lockstep_steps_per_second(gateway, broker) -> None:
    """Throughput of one lockstep session through the gateway and a real environment server.

    The target (>1000 steps/s end to end) is for a quiet machine; this shared test box only
    checks the path is not pathologically slow and prints the rate.
    """
    sid = await _session(gateway)
    async with connect(f"{gateway.ws_url}/v0/sessions/{sid}/stream", compression=None) as ws:
        await _call(ws, env_pb.EnvRequest(id=1, reset=env_pb.ResetRequest(seed=0)))
        steps = [env_pb.EnvRequest(id=2 + i, step=env_pb.StepRequest(action={"discrete": i % 2})).SerializeToString()
                 for i in range(2000)]
        start = time.perf_counter()
        for data in steps:
            await ws.send(data)
            await ws.recv()
        rate = len(steps) / (time.perf_counter() - start)
    print(f"\nlockstep WebSocket steps through the gateway: {rate:.0f}/s")
    assert rate > 200


async def test_unused_streams_are_swept_and_reopened(gateway, broker) -> None:
    sid = await _session(gateway)
    async with connect(f"{gateway.ws_url}/v0/sessions/{sid}/stream", compression=None) as ws:
        await _call(ws, env_pb.EnvRequest(id=1, reset=env_pb.ResetRequest(seed=1)))
        streams = gateway.app.state.gateway.streams
        assert streams.sweep(idle=0) == [sid]
        step = await _call(ws, env_pb.EnvRequest(id=2, step=env_pb.StepRequest(action={"discrete": 0})))
        assert step.HasField("step")  # a new stream to the same instance


async def test_garbage_bytes_do_not_hang(gateway, broker) -> None:
    sid = await _session(gateway)
    async with connect(f"{gateway.ws_url}/v0/sessions/{sid}/stream", compression=None) as ws:
        await ws.send(b"\xff\xff\xff")
        try:
            data = await asyncio.wait_for(ws.recv(), 10)
        except ConnectionClosed as exc:
            assert exc.rcvd.code in (1011, 1013)
        else:
            response = env_pb.EnvResponse.FromString(data)
            assert response.error.code == env_pb.ERROR_CODE_INVALID_ARGUMENT
