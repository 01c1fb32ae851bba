"""The direct path: the SDK steps over the env host's step link with a ticket from the gateway,
and falls back to the gateway's WebSocket wherever that does not work out (real processes)."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import time
from pathlib import Path

import httpx
import numpy as np
import platform_sdk
import pytest
from platform_bus.step_tickets import mint_ticket
from platform_contracts.framing import HEADER
from platform_sdk.client.rest import RestClient
from platform_sdk.client.stream import SessionStream
from platform_testing.platform import running_platform
from platform_testing.ports import free_port
from platform_testing.waiting import instance_pids, wait_for
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.host.v1 import step_link_pb2 as link_pb


def _frame(message: bytes) -> bytes:
    return HEADER.pack(len(message)) + message


def _read_frame(sock: socket.socket) -> bytes:
    def exactly(n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            assert chunk, "the env host closed the link"
            data += chunk
        return data

    return exactly(HEADER.unpack(exactly(4))[0])


def _open_raw(address: str, session_id: str, ticket: str) -> tuple[link_pb.StepLinkOpened, socket.socket]:
    host, _, port = address.rpartition(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    sock.sendall(_frame(link_pb.StepLinkOpen(session_id=session_id, ticket=ticket).SerializeToString()))
    return link_pb.StepLinkOpened.FromString(_read_frame(sock)), sock


def _ticket(url: str, session_id: str) -> httpx.Response:
    return httpx.post(f"{url}/v0/sessions/{session_id}/ticket", timeout=30)


def test_a_default_session_steps_directly_and_is_recorded_as_before(platform_stack):
    actions = [i % 2 for i in range(20)]
    with platform_sdk.connect("cartpole", url=platform_stack.url, record=True) as env:
        assert env.step_path == "direct"
        sid = env.session_id
        env.reset(seed=3)
        for action in actions:
            env.step(action)
    folder = Path(platform_stack.recordings) / sid

    def closed_meta():
        path = folder / "meta.json"
        meta = json.loads(path.read_text()) if path.exists() else {}
        return meta if meta.get("status") == "closed" and meta.get("episodes") else None

    meta = wait_for(closed_meta, what=f"recording {folder} to be closed")
    steps = np.concatenate([np.load(folder / e["file"])["actions"] for e in meta["episodes"]]).tolist()
    assert steps == actions[:len(steps)] and len(steps) >= 9  # cartpole may end the episode early


def test_direct_false_and_platform_direct_0_step_through_the_gateway(platform_stack, monkeypatch):
    with platform_sdk.connect("cartpole", url=platform_stack.url, direct=False) as env:
        assert env.step_path == "gateway"
        env.reset(seed=0)
        assert env.step(0)[1] == 1.0
    monkeypatch.setenv("PLATFORM_DIRECT", "0")
    with platform_sdk.make_vec("cartpole", 2, url=platform_stack.url) as vec:
        assert vec.step_path == "gateway"
    monkeypatch.delenv("PLATFORM_DIRECT")
    with platform_sdk.make_vec("cartpole", 2, url=platform_stack.url) as vec:
        assert vec.step_path == "direct"
        vec.reset(seed=1)
        _, rewards, _, _, _ = vec.step(np.array([0, 1]))
        assert list(rewards) == [1.0, 1.0]


def test_the_ticket_route_answers_200_404_410(platform_stack):
    url = platform_stack.url
    env = platform_sdk.connect("cartpole", url=url, direct=False)
    sid = env.session_id
    answer = _ticket(url, sid)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["session_id"] == sid and body["expires_in_s"] == 60
    host, _, port = body["address"].rpartition(":")
    assert host and port.isdigit()
    missing = _ticket(url, "s-nosuchsession")
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"
    env.close()
    gone = _ticket(url, sid)
    assert gone.status_code == 410 and gone.json()["code"] == "gone"
    # The SDK raises the same errors whether it asked for a ticket first or not.
    rest = RestClient(url, None)
    for session_id, error in ((sid, platform_sdk.SessionClosedError), ("s-nosuchsession", platform_sdk.SessionNotFoundError)):
        for direct in (True, False):
            with pytest.raises(error):
                SessionStream(url, session_id, None, direct=direct, rest=rest).call(
                    env_pb.EnvRequest(spec=env_pb.SpecRequest()))
    rest.close()


def test_the_env_host_refuses_bad_tickets_saying_what_is_wrong(platform_stack):
    url, secret = platform_stack.url, platform_stack.step_ticket_secret
    with platform_sdk.connect("cartpole", url=url, direct=False) as env, \
            platform_sdk.connect("cartpole", url=url, direct=False) as other:
        good = _ticket(url, env.session_id).json()
        address, sid, host_id = good["address"], env.session_id, env.session["host_id"]
        cases = {
            "": (env_pb.ERROR_CODE_UNAUTHENTICATED, "needs a ticket and none was given"),
            mint_ticket("f" * 40, sid, host_id): (env_pb.ERROR_CODE_UNAUTHENTICATED, "bad signature"),
            mint_ticket(secret, sid, host_id, now=time.time() - 600): (env_pb.ERROR_CODE_UNAUTHENTICATED, "expired"),
            _ticket(url, other.session_id).json()["ticket"]: (
                env_pb.ERROR_CODE_PERMISSION_DENIED, f"the step ticket is for session {other.session_id}, not this one"),
        }
        for ticket, (code, words) in cases.items():
            opened, sock = _open_raw(address, sid, ticket)
            with sock:
                assert opened.error.code == code, (words, opened)
                assert words in opened.error.message and sid in opened.error.message
                assert sock.recv(1) == b"", "the refused link is closed"
        opened, sock = _open_raw(address, sid, good["ticket"])
        with sock:
            assert not opened.HasField("error")
            sock.sendall(_frame(env_pb.EnvRequest(id=1, reset=env_pb.ResetRequest(seed=0)).SerializeToString()))
            assert env_pb.EnvResponse.FromString(_read_frame(sock)).HasField("reset")


def test_an_unreachable_step_address_falls_back_to_the_gateway(platform_stack, monkeypatch, caplog):
    closed_port = free_port()
    real_request = RestClient.request

    def elsewhere(self, method, path, json=None, timeout=None):
        answer = real_request(self, method, path, json, timeout)
        if path.endswith("/ticket"):
            answer["address"] = f"127.0.0.1:{closed_port}"  # as an env host behind a NAT would be
        return answer

    monkeypatch.setattr(RestClient, "request", elsewhere)
    with caplog.at_level(logging.DEBUG, logger="platform_sdk.client.stream"), \
            platform_sdk.connect("cartpole", url=platform_stack.url) as env:
        assert env.step_path == "gateway"
        env.reset(seed=0)
        assert env.step(1)[1] == 1.0
    assert f"cannot open the step link at 127.0.0.1:{closed_port}" in caplog.text


def test_a_dropped_link_reconnects_directly_with_a_new_ticket(platform_stack, monkeypatch):
    tickets = []
    real_request = RestClient.request

    def counted(self, method, path, json=None, timeout=None):
        if path.endswith("/ticket"):
            tickets.append(path)
        return real_request(self, method, path, json, timeout)

    monkeypatch.setattr(RestClient, "request", counted)
    with platform_sdk.connect("cartpole", url=platform_stack.url) as env:
        env.reset(seed=0)
        env.step(0)
        first = env._stream._ws
        first.socket.shutdown(socket.SHUT_RDWR)  # the link drops
        obs, reward, *_ = env.step(1)  # not written on the dead link: sent again on a new one
        assert reward == 1.0 and env.step_path == "direct" and env._stream._ws is not first
        assert len(tickets) == 2


def _kill_instance(session_id: str) -> None:
    pids = instance_pids(session_id)
    assert pids, f"the environment process of session {session_id} is running"
    for pid in pids:
        os.kill(pid, signal.SIGKILL)


def test_an_instance_crash_raises_the_same_errors_on_both_paths(platform_stack):
    seen = {}
    for direct in (True, False):
        with platform_sdk.connect("cartpole", url=platform_stack.url, direct=direct) as env:
            assert env.step_path == ("direct" if direct else "gateway")
            env.reset(seed=0)
            env.step(0)
            _kill_instance(env.session_id)
            with pytest.raises(platform_sdk.EnvironmentCrashedError) as crashed:
                for _ in range(100):
                    env.step(0)
                    time.sleep(0.05)
            assert env.session_id in str(crashed.value) and "READY" in crashed.value.log_tail
            with pytest.raises(platform_sdk.PlatformError) as after:
                env.step(0)
            seen[direct] = (type(crashed.value), type(after.value))
    assert seen[True] == seen[False], seen
    assert seen[True][1] is platform_sdk.SessionClosedError


def test_a_gateway_without_the_direct_path_answers_409_and_the_sdk_uses_the_gateway(tmp_path):
    with running_platform(tmp_path, extra_env={"PLATFORM_DIRECT_STEPS": "false"}) as stack, \
            platform_sdk.connect("cartpole", url=stack.url) as env:
        assert env.step_path == "gateway"
        env.reset(seed=0)
        assert env.step(0)[1] == 1.0
        refused = _ticket(stack.url, env.session_id)
        assert refused.status_code == 409 and refused.json()["code"] == "failed_precondition"
        assert "PLATFORM_DIRECT_STEPS=false" in refused.json()["detail"]
