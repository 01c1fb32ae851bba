"""`python -m platform_sdk --transport frames`: the environment protocol's messages as
length-prefixed frames on a Unix socket (what the env host speaks to the instances it starts)."""

from __future__ import annotations

import os
import signal
import socket
import struct
from pathlib import Path

import platform_testing.env_server_client as helpers
import pytest
from platform_sdk.launch.instance_launch import LaunchSpec, launch_instance
from platform_sdk.launch.instance_processes import server_command
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb

HEADER = struct.Struct("<I")


class FramedClient:
    """A blocking client of the framed transport: one request at a time."""

    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(60)
        self.sock.connect(path)
        self.next_id = 1

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read_raw(self, size: int) -> bytes:
        """`size` bytes, or fewer when the server closes the connection first."""
        data = b""
        while len(data) < size:
            chunk = self.sock.recv(size - len(data))
            if not chunk:
                break
            data += chunk
        return data

    def request(self, **command: object) -> env_pb.EnvResponse:
        request = env_pb.EnvRequest(id=self.next_id, **command)  # type: ignore[arg-type]
        self.next_id += 1
        payload = request.SerializeToString()
        self.send_raw(HEADER.pack(len(payload)) + payload)
        (length,) = HEADER.unpack(self.read_raw(HEADER.size))
        response = env_pb.EnvResponse.FromString(self.read_raw(length))
        assert response.id == request.id
        return response

    def close(self) -> None:
        self.sock.close()


def _frames_server(tmp_path: Path, *args: str) -> tuple[helpers.ServerProcess, str]:
    path = str(tmp_path / "env.sock")
    server = helpers.ServerProcess(
        ["--gym-id", "CartPole-v1", "--transport", "frames", *args], listen=f"unix:{path}"
    )
    assert server.address == f"unix:{path}"  # the READY line names the socket as gRPC's does
    return server, path


def _step(action: int, **options: bool) -> env_pb.StepRequest:
    return env_pb.StepRequest(action=pb.Value(discrete=action), **options)


def test_a_frames_server_answers_spec_reset_step_close_in_order(tmp_path: Path) -> None:
    server, path = _frames_server(tmp_path, "--kwargs", '{"max_episode_steps": 3}')
    with server:
        client = FramedClient(path)
        spec = client.request(spec=env_pb.SpecRequest()).spec
        assert spec.env_id == "CartPole-v1" and spec.action_space.discrete.n == 2
        reset = client.request(reset=env_pb.ResetRequest(seed=7)).reset
        assert len(reset.observation.tensor.shape) == 1
        first = client.request(step=_step(1, render_later=True))
        assert first.step.frame_later and not first.later_frames
        second = client.request(step=_step(0))  # the frame rendered after the first answer went out
        assert [f.request_id for f in second.later_frames] == [first.id]
        assert client.request(step=_step(1)).step.truncated  # the kwargs reached the environment
        bad = client.request(step=env_pb.StepRequest(action=pb.Value(discrete=5)))
        assert bad.HasField("error") and "5" in bad.error.message  # an error answer, the link stays
        assert client.request(close=env_pb.CloseRequest()).HasField("close")
        client.close()
    assert server.process.wait(timeout=15) == 0


def test_a_large_request_and_a_second_connection_after_eof(tmp_path: Path) -> None:
    server, path = _frames_server(tmp_path)
    with server:
        first = FramedClient(path)
        first.request(reset=env_pb.ResetRequest(seed=1))
        big = first.request(import_state=env_pb.ImportStateRequest(state=os.urandom(300_000), format="pickle"))
        assert big.HasField("error")  # not a state: answered, over a frame larger than the buffer
        assert first.request(step=_step(0)).HasField("step")
        first.close()  # EOF: the server goes back to accepting
        second = FramedClient(path)
        assert second.request(spec=env_pb.SpecRequest()).spec.env_id == "CartPole-v1"
        assert second.request(step=_step(1)).HasField("step")  # the same instance, still reset
        second.close()


def test_a_frame_over_the_limit_closes_that_connection_only(tmp_path: Path) -> None:
    server, path = _frames_server(tmp_path)
    with server:
        client = FramedClient(path)
        client.send_raw(HEADER.pack(0xFFFFFFFF))
        assert client.read_raw(1) == b""  # closed, unanswered
        client.close()
        garbage = FramedClient(path)
        garbage.send_raw(HEADER.pack(3) + b"\xff\xff\xff")
        assert garbage.read_raw(1) == b""
        garbage.close()
        after = FramedClient(path)
        assert after.request(spec=env_pb.SpecRequest()).spec.env_id == "CartPole-v1"
        after.close()
    log = server.stderr_text()
    assert "a frame of 4294967295 bytes is over the" in log
    assert "a frame is not an EnvRequest" in log


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signals_stop_cleanly_and_remove_the_socket(tmp_path: Path, sig: signal.Signals) -> None:
    server, path = _frames_server(tmp_path)
    client = FramedClient(path)
    client.request(reset=env_pb.ResetRequest(seed=0))
    server.process.send_signal(sig)  # while a connection is open and the server waits in recv
    assert server.process.wait(timeout=15) == 0
    assert not os.path.exists(path)
    assert "Traceback" not in server.stderr_text()
    client.close()


def test_frames_with_a_tcp_listen_address_exits_2_with_one_line() -> None:
    result = helpers.run_server(["--gym-id", "CartPole-v1", "--transport", "frames", "--listen", "127.0.0.1:0"])
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert "--transport frames needs a 'unix:/path/x.sock' --listen address" in lines[0]


def test_the_server_command_asks_for_frames_only_when_told() -> None:
    spec = LaunchSpec(gymnasium_id="CartPole-v1")
    assert "--transport" not in server_command(spec, "unix:/tmp/a.sock")  # gRPC: the server's default
    framed = server_command(spec, "unix:/tmp/a.sock", "frames")
    assert framed[framed.index("--transport") + 1] == "frames"


async def test_launch_instance_with_frames_speaks_frames(tmp_path: Path) -> None:
    instance = await launch_instance(LaunchSpec(gymnasium_id="CartPole-v1"), tmp_path, "fr", transport="frames")
    try:
        assert instance.transport == "frames" and instance.address == f"unix:{tmp_path}/fr.sock"
        client = FramedClient(str(tmp_path / "fr.sock"))
        assert client.request(spec=env_pb.SpecRequest()).spec.env_id == "CartPole-v1"
        client.close()
    finally:
        await instance.stop()
    assert instance.returncode == 0 and not (tmp_path / "fr.sock").exists()
    grpc_instance = await launch_instance(LaunchSpec(gymnasium_id="CartPole-v1"), tmp_path, "gr")
    try:
        assert grpc_instance.transport == "grpc"  # the default: platform-check and users' tools
    finally:
        await grpc_instance.stop()
