"""The stream's JSON text commands for browsers: frames as one binary message after the answer
that announces them, observations in full, as digests or left out, commands checked by their
models (a 422 naming the field), and the messages declared in the OpenAPI document."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal

import numpy as np
import pytest
import simplejpeg
from platform_contracts.digests import observation_digest
from platform_contracts.values import tensor_from_array
from platform_gateway.app import api_app
from platform_gateway.json_ops import parse_command, run_command
from platform_gateway.json_views import frame_jpeg
from platform_gateway.schemas.stream import ANSWERS, RestoreSavedAnswer, StreamErrorAnswer, openapi_components
from simulusion.control.v1 import control_pb2 as ctl
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as values_pb
from websockets.asyncio.client import ClientConnection, connect


async def _session(gateway: Any) -> str:
    response = await gateway.http.post("/v0/sessions", json={"env_id": "cartpole"})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


async def _recv(ws: ClientConnection) -> str | bytes:
    return await asyncio.wait_for(ws.recv(), 10)


async def _ask(ws: ClientConnection, message: dict[str, Any]) -> tuple[dict[str, Any], bytes | None]:
    """Send a command; (its answer, the binary frame that follows it when the answer announces one)."""
    await ws.send(json.dumps(message))
    text = await _recv(ws)
    assert isinstance(text, str), "a command is answered by a text message first"
    answer = json.loads(text)
    assert answer["id"] == message.get("id") and answer["op"] == message.get("op")
    _conforms(answer)
    frame = (answer.get("result") or {}).get("frame")
    if frame is None:
        return answer, None
    data = await _recv(ws)
    assert isinstance(data, bytes) and len(data) == frame["size"], "exactly the announced JPEG follows"
    return answer, data


async def test_frames_come_as_one_binary_message_after_the_answer(gateway, broker) -> None:
    sid = await _session(gateway)
    async with connect(f"{gateway.ws_url}/v0/sessions/{sid}/stream") as ws:
        reset, jpeg = await _ask(ws, {"id": 1, "op": "reset", "seed": 4, "frame": True})
        result = reset["result"]
        assert len(result["observation"]) == 4 and result["observation_digest"] is None
        assert result["frame"] == {"mime": "image/jpeg", "width": 600, "height": 400, "size": len(jpeg or b"")}
        assert simplejpeg.decode_jpeg(jpeg).shape == (400, 600, 3)

        step, jpeg = await _ask(ws, {"id": 2, "op": "step", "action": 1, "frame": True, "observation": "none"})
        assert step["result"]["observation"] is None and step["result"]["reward"] == 1.0
        assert step["result"]["frame"]["size"] == len(jpeg or b"") and jpeg and jpeg[:2] == b"\xff\xd8"

        # Without "frame", no binary message: the next message is the next command's answer.
        plain, none = await _ask(ws, {"id": 3, "op": "step", "action": 0})
        assert plain["result"]["frame"] is None and none is None
        handle = (await _ask(ws, {"id": 4, "op": "snapshot"}))[0]["result"]["handle"]
        restored, jpeg = await _ask(ws, {"id": 5, "op": "restore", "handle": handle, "frame": True})
        assert restored["result"]["frame"]["width"] == 600 and jpeg
        assert 0 < restored["result"]["restore_s"] < 10  # the environment server's own time to restore
        rendered, again = await _ask(ws, {"id": 6, "op": "render"})
        assert again == jpeg, "the restored state's frame is the current one"
        assert set(rendered["result"]) == {"frame"}


async def test_observation_digest_is_that_of_the_observation(gateway, broker) -> None:
    sid = await _session(gateway)
    async with connect(f"{gateway.ws_url}/v0/sessions/{sid}/stream") as ws:
        full, _ = await _ask(ws, {"id": "a", "op": "reset", "seed": 11})
        digest, _ = await _ask(ws, {"id": "b", "op": "reset", "seed": 11, "observation": "digest"})
        obs = np.array(full["result"]["observation"], dtype=np.float32)
        assert digest["result"]["observation"] is None
        assert digest["result"]["observation_digest"] == observation_digest(obs)
        stepped, _ = await _ask(ws, {"id": "c", "op": "step", "action": 0, "observation": "digest"})
        assert stepped["result"]["observation_digest"] not in (None, digest["result"]["observation_digest"])


@pytest.mark.parametrize(
    ("message", "field", "says"),
    [
        ({"id": 1, "op": "step"}, "action", "action: required"),
        ({"id": 2, "op": "step", "action": 0, "frame": "yes"}, "frame", "frame: Input should be a valid boolean"),
        ({"id": 3, "op": "step", "action": 0, "observation": "all"}, "observation", "'full', 'digest' or 'none'"),
        ({"id": 4, "op": "reset", "sed": 3}, "sed", "sed: unknown field"),
        ({"id": 5, "op": "reset", "seed": 1.5}, "seed", "seed: Input should be a valid integer"),
        ({"id": 6, "op": "restore"}, "handle", "handle: required"),
        ({"id": 7, "op": "restore_saved", "snapshot_id": "../x"}, "snapshot_id", "snapshot_id:"),
        ({"id": 8, "op": "hold", "action": 0, "steps": 0}, "steps", "steps: Input should be greater than or equal to 1"),
        ({"id": 9}, "op", 'the command has no "op"; expected one of reset, step, hold'),
        ({"id": 10, "op": "jump"}, "op", "the command has the unknown op 'jump'"),
    ],
)
async def test_malformed_commands_are_422_naming_the_field(gateway, broker, message, field, says) -> None:
    sid = await _session(gateway)
    async with connect(f"{gateway.ws_url}/v0/sessions/{sid}/stream") as ws:
        await ws.send(json.dumps(message))
        answer = json.loads(await _recv(ws))
        assert answer["id"] == message["id"] and answer["op"] == message.get("op")
        error = answer["error"]
        assert (error["status"], error["code"], error["field"]) == (422, "invalid_argument", field), error
        assert set(error) == set(schemas_of("StreamError")["required"]), "every field the schema says"
        assert says in error["detail"], error["detail"]
        ok, _ = await _ask(ws, {"id": "next", "op": "reset"})  # the socket stays up
        assert "result" in ok


async def test_messages_that_are_not_commands(gateway, broker) -> None:
    sid = await _session(gateway)
    async with connect(f"{gateway.ws_url}/v0/sessions/{sid}/stream") as ws:
        for text, says in (("{not json", "not JSON"), ("[1, 2]", "a command is a JSON object like")):
            await ws.send(text)
            answer = json.loads(await _recv(ws))
            assert answer["id"] is None and answer["op"] is None and says in answer["error"]["detail"]
            assert answer["error"]["status"] == 422 and answer["error"]["field"] is None


async def test_an_environment_without_frames_answers_frame_null(gateway, broker, new_env_server) -> None:
    server = new_env_server(gym_id="FrozenLake-v1", kwargs={"render_mode": "ansi"})  # text, no frames
    await broker.use_env_server(server.address)
    sid = await _session(gateway)
    async with connect(f"{gateway.ws_url}/v0/sessions/{sid}/stream") as ws:
        reset, jpeg = await _ask(ws, {"id": 1, "op": "reset", "frame": True, "observation": "digest"})
        assert reset["result"]["frame"] is None and jpeg is None
        assert reset["result"]["observation_digest"] == observation_digest(0)  # Discrete: the start cell
        step, jpeg = await _ask(ws, {"id": 2, "op": "step", "action": 0, "frame": True})
        assert step["result"]["frame"] is None and jpeg is None
        render, _ = await _ask(ws, {"id": 3, "op": "render"})
        assert render["error"]["status"] == 501 and "renders no frames" in render["error"]["detail"]


def test_a_frame_that_is_its_observation_is_encoded_from_it() -> None:
    screen = np.zeros((21, 16, 3), dtype=np.uint8)
    screen[5:9, 4:12] = (200, 40, 10)
    value = values_pb.Value(tensor=tensor_from_array(screen))
    frame = env_pb.Frame(encoding="observation", width=16, height=21, quality=95)
    decoded = simplejpeg.decode_jpeg(frame_jpeg(frame, value))
    assert decoded.shape == (21, 16, 3) and np.abs(decoded.astype(int) - screen).mean() < 8
    with pytest.raises(ValueError, match="without an image observation"):
        frame_jpeg(frame, values_pb.Value(discrete=1))


class _SavedRestores:
    """The part of EnvCommands a restore_saved uses: answers as the env host would (or an older one)."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds

    async def restore_saved_response(self, session_id: str, snapshot_id: str) -> tuple[ctl.SessionInfo,
                                                                                         env_pb.EnvResponse]:
        restored = env_pb.RestoreSavedResponse(observation=values_pb.Value(discrete=3))
        if self.seconds is not None:
            restored.seconds = self.seconds
        return ctl.SessionInfo(id=session_id), env_pb.EnvResponse(restore_saved=restored)


class _ScreenSteps:
    """The part of EnvCommands a step uses: an Atari-like answer, the frame being its observation."""

    async def step_response(self, session_id: str, action: Any, agent: Any, auto_reset: bool,
                            render: bool) -> tuple[ctl.SessionInfo, env_pb.EnvResponse]:
        screen = np.full((210, 160, 3), 90, dtype=np.uint8)
        step = env_pb.StepResponse(observation=values_pb.Value(tensor=tensor_from_array(screen)), reward=1.0)
        step.frame.CopyFrom(env_pb.Frame(encoding="observation", width=160, height=210, quality=80))
        return ctl.SessionInfo(id=session_id), env_pb.EnvResponse(step=step)


@pytest.mark.parametrize("mode", ["none", "digest"])
async def test_an_observation_not_asked_for_is_never_made_json(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # An Atari screen as JSON is 100,800 numbers: tens of milliseconds of the gateway's CPU a step.
    from platform_gateway import json_views

    converted: list[str] = []
    real = json_views.value_json

    def counted(value: values_pb.Value) -> Any:
        converted.append(value.WhichOneof("kind") or "")
        return real(value)

    monkeypatch.setattr(json_views, "value_json", counted)
    command = parse_command({"id": 1, "op": "step", "action": 0, "frame": True, "observation": mode}, "s-1")
    result, jpeg = await run_command(_ScreenSteps(), "s-1", command)  # type: ignore[arg-type]
    assert converted == [] and result["observation"] is None
    assert (result["observation_digest"] is not None) == (mode == "digest")
    assert jpeg is not None and simplejpeg.decode_jpeg(jpeg).shape == (210, 160, 3)


@pytest.mark.parametrize("seconds", [0.125, None])
async def test_restore_saved_answers_the_seconds_the_env_host_passed_on(seconds: float | None) -> None:
    # restore_saved needs the env host and the recorder (tests/test_e2e_saved_snapshots.py): the answer here
    command = parse_command({"id": 1, "op": "restore_saved", "snapshot_id": "snap-0123456789ab"}, "s-1")
    result, jpeg = await run_command(_SavedRestores(seconds), "s-1", command)  # type: ignore[arg-type]
    assert result["restore_s"] == seconds and result["observation"] == 3 and jpeg is None
    RestoreSavedAnswer.model_validate({"id": 1, "op": "restore_saved", "result": result})


def test_the_openapi_document_declares_every_stream_message() -> None:
    document = api_app(None).openapi()
    schemas = document["components"]["schemas"]
    names = {"StreamCommand", "StreamAnswer", "StreamFrame", "StreamError", "ResetCommand", "StepCommand",
             "HoldCommand", "SnapshotCommand", "RestoreCommand", "SaveSnapshotCommand", "RestoreSavedCommand",
             "RenderCommand", "ResetAnswer", "StepAnswer", "RenderAnswer", "StreamErrorAnswer", "StreamRestoreResult"}
    assert names <= set(schemas)
    for answer in ("RestoreAnswer", "RestoreSavedAnswer"):
        assert schemas[answer]["properties"]["result"]["$ref"] == "#/components/schemas/StreamRestoreResult"
    assert "restore_s" in schemas["StreamRestoreResult"]["required"]
    assert "restore_s" not in schemas["StreamResetResult"]["properties"]
    command = schemas["StreamCommand"]
    assert command["discriminator"]["propertyName"] == "op"
    assert command["discriminator"]["mapping"]["step"] == "#/components/schemas/StepCommand"
    assert len(command["oneOf"]) == 8
    step = schemas["StepCommand"]["properties"]
    assert step["observation"]["enum"] == ["full", "digest", "none"] and step["frame"]["default"] is False
    assert set(schemas["StreamFrame"]["required"]) == {"mime", "width", "height", "size"}
    assert "frame" in schemas["StreamStepResult"]["required"], "answers always hold every field"
    # Every reference resolves, and a second app writes the same document.
    refs = {v for v in _walk(schemas) if isinstance(v, str) and v.startswith("#/components/schemas/")}
    assert {ref.rsplit("/", 1)[1] for ref in refs} <= set(schemas)
    assert json.dumps(api_app(None).openapi(), sort_keys=True) == json.dumps(document, sort_keys=True)
    for name, schema in openapi_components().items():
        assert schemas[name] == schema, f"{name}: the REST routes declare it otherwise"


def _conforms(answer: dict[str, Any]) -> None:
    """The answer is its op's answer model (or the error answer), holding every field its schema requires."""
    model = StreamErrorAnswer if "error" in answer else next(m for m in ANSWERS if m.model_fields["op"].annotation
                                                              == Literal[answer["op"]])
    parsed = model.model_validate(answer)
    schemas = openapi_components()
    assert set(schemas[model.__name__]["required"]) <= set(answer)
    inner = "error" if "error" in answer else "result"
    ref = schemas[model.__name__]["properties"][inner]["$ref"].rsplit("/", 1)[1]
    assert set(schemas[ref]["required"]) <= set(answer[inner]), (ref, answer[inner])
    assert parsed.id == answer["id"]


def schemas_of(name: str) -> dict[str, Any]:
    return dict(openapi_components()[name])


def _walk(node: Any) -> Any:
    if isinstance(node, dict):
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)
    else:
        yield node
